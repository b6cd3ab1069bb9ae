"""docs/testing.md's rule, kept true by an AST scan of every test file: a test asserts behaviour,
never a measured duration. Three things are refused outside a marked hang guard:

- an `assert` comparing a measured duration (`time.monotonic() - started < 5`, or a name that
  holds one) or two clock readings (`time.monotonic() < deadline`) with `<`, `<=`, `>` or `>=`;
- an `assert` comparing a latency the code measured on this machine (a key or attribute named
  like `loop_lag_p99_ms`, `start_lag_p99_ms`, `cpu_share`, `itl_p99`, `ttft_p99`) with a number;
- switching the garbage collector off (`quiet_gc`, `gc.disable()`) so that a timing holds.

A hang guard is an assert whose line (or the line above it) carries `# hang guard:` followed by
why its bound is a generous multiple of the configured timeout.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MARK = "# hang guard:"
TIMERS = {"monotonic", "perf_counter", "time", "monotonic_ns", "perf_counter_ns", "time_ns"}
MEASURED = re.compile(r"(loop_lag|start_lag|cpu_share|itl_p\d|ttft_p\d)", re.IGNORECASE)
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
    """Names in one function: `stamps` hold a clock reading, `durations` a difference of them."""

    def __init__(self) -> None:
        self.stamps: set[str] = set()
        self.durations: set[str] = set()

    def timed(self, node: ast.AST) -> bool:
        return any(
            _is_timer(n) or (isinstance(n, ast.Name) and n.id in self.stamps | self.durations)
            for n in ast.walk(node)
        )

    def duration(self, node: ast.AST) -> bool:
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id in self.durations:
                return True
            if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub):
                if self.timed(n.left) or self.timed(n.right):
                    return True
        return False

    def learn(self, targets: list[ast.expr], value: ast.AST) -> None:
        names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        if self.duration(value):
            self.durations.update(names)
        elif self.timed(value):
            self.stamps.update(names)


def _measured(node: ast.AST) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and MEASURED.search(n.attr):
            return True
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and MEASURED.search(n.value):
            return True
    return False


def _number(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, int | float)


def _timing_compare(scope: _Scope, test: ast.AST) -> str | None:
    for cmp in (n for n in ast.walk(test) if isinstance(n, ast.Compare)):
        if not all(isinstance(op, ORDERING) for op in cmp.ops):
            continue
        operands = [cmp.left, *cmp.comparators]
        if any(scope.duration(o) for o in operands):
            return "compares a measured duration"
        if any(scope.timed(a) and scope.timed(b) for a, b in zip(operands, operands[1:])):
            return "compares two clock readings"
        if any(_measured(a) and _number(b) or _number(a) and _measured(b)
               for a, b in zip(operands, operands[1:])):  # fmt: skip
            return "compares a latency measured on this machine with a number"
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
        return any(MARK in lines[i - 1] for i in range(max(1, first - 1), last + 1))

    for func in _functions(tree):
        scope = _Scope()
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
    "latency": "def t(r):\n    assert r['workload']['start_lag_p99_ms'] < 50\n",
    "attribute": "def t(load):\n    assert load.loop_lag_p99_ms > 40\n",
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
        "    s = time.monotonic()\n"
        "    # hang guard: 30 x the 1 s timeout\n"
        "    assert time.monotonic() - s < 30\n"
        "    assert time.monotonic() - s < 30  # hang guard: 30 x the 1 s timeout\n"
    )
    assert violations(ok) == []
