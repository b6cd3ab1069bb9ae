"""docs/testing.md's rule, kept true by an AST scan of every test file: a test asserts behaviour,
never a measured duration. Three things are refused unless marked:

- an `assert` comparing a measured duration (`time.monotonic() - started < 5`, or a name that
  holds one) or two clock readings (`time.monotonic() < deadline`) with `<`, `<=`, `>` or `>=`;
- in a live test file (`LIVE`: it runs a server, a process or an event loop), an `assert`
  comparing a time the code measured on this machine (a key or attribute named like
  `loop_lag_p99_ms`, `cpu_share`, `ttft`, `itls`, `latency`, `duration`) with something that is
  not one (a number other than 0, a schedule);
- switching the garbage collector off (`quiet_gc`, `gc.disable()`) so that a timing holds.

Two marks let an assert through, on its line or the line above it: `# hang guard: <why the bound
is a generous multiple of the configured timeout>`, and `# order: <which event comes first>` for
two time stamps of causally ordered events (a token is read after it arrived), which load can
only move apart, never swap. The scan sees the common shapes, not every one (a value copied
into a plain variable before the assert escapes it): docs/testing.md is the rule.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MARKS = ("# hang guard:", "# order:")
TIMERS = {"monotonic", "perf_counter", "time", "monotonic_ns", "perf_counter_ns", "time_ns"}
#: What a live test (one that runs a server, a process or an event loop: `LIVE`) measured on this
#: machine, by the key or attribute it is read from.
MEASURED = re.compile(
    r"(?<![a-z])(lag|cpu_share|itls?|ttft|latency|latencies|chunk_times|send_time|duration)"
    r"(?![a-z])"
)
LIVE = re.compile(r"subprocess|Popen|Server\b|_server\(|run_plan\(|asyncio\.run\(|httpx\.|urlopen")
ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _test_files() -> list[Path]:
    roots = [ROOT / "tests", *sorted((ROOT / "packages").glob("*/tests"))]
    return sorted(p for r in roots for p in r.rglob("*.py") if p != Path(__file__).resolve())


def _is_timer(node: ast.AST) -> bool:
    """`time.monotonic()`, `time.perf_counter()`, `time.time()` (and bare `monotonic()`)."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr in TIMERS and isinstance(func.value, ast.Name) and func.value.id == "time"
    return isinstance(func, ast.Name) and func.id in TIMERS - {"time"}


class _Scope:
    """Names in one function: `stamps` hold a clock reading, `durations` a difference of them,
    and (in a live file) `measures` tells an expression that reads a measured key or attribute."""

    def __init__(self, live: bool) -> None:
        self.live = live
        self.stamps: set[str] = set()
        self.durations: set[str] = set()

    def measures(self, node: ast.AST) -> bool:
        if not self.live:
            return False
        for n in ast.walk(node):
            if isinstance(n, ast.Attribute) and MEASURED.search(n.attr):
                return True
            if (
                isinstance(n, ast.Constant)
                and isinstance(n.value, str)
                and MEASURED.search(n.value)
            ):
                return True
        return False

    def timed(self, node: ast.AST) -> bool:
        return any(
            _is_timer(n) or (isinstance(n, ast.Name) and n.id in self.stamps | self.durations)
            for n in ast.walk(node)
        )

    def duration(self, node: ast.AST) -> bool:
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id in self.durations:
                return True
            sub = isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub)
            if sub and self.timed(n.left) and self.timed(n.right):  # a reading minus a reading
                return True
        return False

    def learn(self, targets: list[ast.expr], value: ast.AST) -> None:
        names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        if self.duration(value):
            self.durations.update(names)
        elif self.timed(value):
            self.stamps.update(names)


def _zero(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0


def _timing_compare(scope: _Scope, test: ast.AST) -> str | None:
    for cmp in (n for n in ast.walk(test) if isinstance(n, ast.Compare)):
        if not all(isinstance(op, ORDERING) for op in cmp.ops):
            continue
        operands = [cmp.left, *cmp.comparators]
        if any(scope.duration(o) for o in operands):
            return "compares a measured duration"
        pairs = list(itertools.pairwise(operands))
        if any(scope.timed(a) and scope.timed(b) for a, b in pairs):
            return "compares two clock readings"
        if any(scope.measures(a) != scope.measures(b) and not (_zero(a) or _zero(b))
               for a, b in pairs):  # fmt: skip
            return "compares a time measured on this machine"
    return None


def _functions(tree: ast.Module) -> Iterator[ast.AST]:
    yield tree
    yield from (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))


def violations(source: str, name: str = "<test>") -> list[str]:
    """Every line of `source` that breaks the rule, as `name:line: why`."""
    tree = ast.parse(source, filename=name)
    lines = source.splitlines()
    found: set[tuple[int, str]] = set()

    def marked(node: ast.stmt) -> bool:
        first, last = node.lineno, node.end_lineno or node.lineno
        return any(m in lines[i - 1] for m in MARKS for i in range(max(1, first - 1), last + 1))

    live = bool(LIVE.search(source))
    for func in _functions(tree):
        scope = _Scope(live)
        body = func.body if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef) else []
        nodes = sorted(
            (n for b in body for n in ast.walk(b) if isinstance(n, ast.stmt)),
            key=lambda n: n.lineno,
        )
        for node in nodes:
            if isinstance(node, ast.Assign):
                scope.learn(list(node.targets), node.value)
            elif isinstance(node, ast.AnnAssign | ast.AugAssign) and node.value is not None:
                scope.learn([node.target], node.value)
            elif isinstance(node, ast.For | ast.AsyncFor):
                scope.learn([node.target], node.iter)
            elif isinstance(node, ast.Assert) and not marked(node):
                why = _timing_compare(scope, node.test)
                if why:
                    found.add((node.lineno, why))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _calls(node, "gc", "disable"):
            found.add((node.lineno, "switches the garbage collector off"))
        if isinstance(node, ast.Constant) and node.value == "quiet_gc":
            found.add((node.lineno, "switches the garbage collector off (quiet_gc)"))
        if isinstance(node, ast.FunctionDef) and node.name == "quiet_gc":
            found.add((node.lineno, "defines quiet_gc"))
    return [f"{name}:{line}: {why}" for line, why in sorted(found)]


def _calls(node: ast.Call, module: str, attr: str) -> bool:
    f = node.func
    return (
        isinstance(f, ast.Attribute)
        and f.attr == attr
        and isinstance(f.value, ast.Name)
        and f.value.id == module
    )


def test_no_test_asserts_a_measured_duration() -> None:
    found = [
        v
        for path in _test_files()
        for v in violations(path.read_text(), str(path.relative_to(ROOT)))
    ]
    assert not found, (
        "these assertions time the machine (docs/testing.md): inject a clock, assert the events, "
        "or move the claim to benchmarks/; a real-time bound that is only a hang guard says so "
        "with `# hang guard: <why the bound is generous>`:\n" + "\n".join(found)
    )


SAMPLES = {
    "elapsed": "import time\ndef t():\n    s = time.monotonic()\n    go()\n"
    "    elapsed = time.monotonic() - s\n    assert elapsed < 3.0\n",
    "inline": "import time\ndef t():\n    s = time.perf_counter()\n    go()\n"
    "    assert time.perf_counter() - s >= 0.25\n",
    "deadline": "import time\ndef t():\n    deadline = time.monotonic() + 5\n"
    "    assert time.monotonic() < deadline\n",
    "latency": "def t(r):\n    run_plan(r)\n    assert r['workload']['start_lag_p99_ms'] < 50\n",
    "attribute": "import asyncio\ndef t(load):\n    asyncio.run(go())\n"
    "    assert load.loop_lag_p99_ms > 40\n",
    "record": "def t(server):\n    with _server() as s:\n        rs = send(s)\n"
    "    for r in rs:\n        assert r.ttft <= 0.025\n",
    "gc": "import gc\ndef t():\n    gc.disable()\n",
    "fixture": "import pytest\n@pytest.mark.usefixtures('quiet_gc')\ndef t():\n    pass\n",
}


@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_the_scan_catches_a_timing_assertion(sample: str) -> None:
    assert violations(SAMPLES[sample]), sample


def test_the_scan_lets_behaviour_and_marked_hang_guards_through() -> None:
    ok = (
        "import time\n"
        "def t(r, clock):\n"
        "    before = time.time()\n"
        "    x = run()\n"
        "    assert before <= x.stamp <= time.time()\n"  # a bracket, not a duration
        "    assert clock.now - 3 == 2\n"  # a fake clock's reading, compared exactly
        "    assert r['start_lag_p99_ms'] == 0.0\n"
        "    assert asyncio.run(go()).duration > 0\n"  # a sanity check, not a bound
        "    s = time.monotonic()\n"
        "    # hang guard: 30 x the 1 s timeout\n"
        "    assert time.monotonic() - s < 30\n"
        "    assert time.monotonic() - s < 30  # hang guard: 30 x the 1 s timeout\n"
    )
    assert violations(ok) == []
