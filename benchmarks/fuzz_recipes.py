"""Our own recipe fuzzer: seeded mutations of real recipes through the whole load and plan path.

Every case is one mutation of a recipe from ``examples/`` or the public corpus (``$SRT_CORPUS``,
default ``../shared/corpus``, v2 recipes): a leaf replaced by a hostile value (YAML dates, tags,
huge or negative numbers, path traversal, long strings, self-referencing aliases), a key
renamed, dropped or added, an alias bomb, deep nesting, or the text cut short. The case is loaded
with ``srt_schema.load_recipe_text`` and every job it yields is planned with ``srt_planner``,
the way ``srtctl dry-run`` does. The promise under test: a bad recipe is refused with a message
that names where (``$.path``), never a traceback, a hang or unbounded memory.

Cases run in a worker process with a memory limit; a case that takes longer than ``--hang``
seconds kills the worker and counts as a hang. The script prints the counts and the first
examples of every failure class:

    uv run python benchmarks/fuzz_recipes.py [--cases 20000] [--seed 1] [--hang 5] [--mem-mib 2048]
        [--max-seconds S] [--seeds 1-5]

``--seeds A-B`` runs ``--cases`` cases for each seed from A to B and prints each seed's counts
and their sum. "Absurd accepted" covers the node count and, for a recipe that loads, every text
over its bound and the fields with a format (``model.path``, ``model.container``,
``model.precision``, ``resources.gpu_type``, ``slurm.time_limit``, ``benchmark.concurrencies``).
"""

from __future__ import annotations

import argparse
import copy
import multiprocessing as mp
import os
import random
import resource
import sys
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
#: A message longer than this is a finding (a user should read the message, not scroll it).
MAX_MESSAGE = 2048
#: Jobs beyond this many nodes are not planned on simulated nodes (they should have been refused).
MAX_PLANNED_NODES = 4096
_MARK = "@@FUZZ@@"

#: Raw YAML fragments put in place of a leaf value.
HOSTILE_VALUES: tuple[str, ...] = (
    "2024-01-01",
    "2024-01-01T10:00:00Z",
    "!!binary aGVsbG8=",
    "!!set {a: null, b: null}",
    "!!python/object/apply:os.system [ls]",
    "!custom tag",
    "!!int '12'",
    "!!float '1.5'",
    "!!str 5",
    ".inf",
    "-.inf",
    ".nan",
    "0x1F",
    "1e400",
    "-5",
    "0",
    "-1",
    "1000000000000",
    "9223372036854775808",
    "99999999999999999999999999",
    "0.5",
    # counts that leave a role's workers without a GPU or split its nodes unevenly
    "3",
    "9",
    "17",
    "''",
    "null",
    "~",
    "[]",
    "{}",
    "[[[[[[[[[[[[1]]]]]]]]]]]]",
    "'../../x'",
    "'/etc/passwd'",
    "'a/b'",
    "'.hidden'",
    "'{job_id}'",
    "'{unknown_placeholder}'",
    "'$HOME/x'",
    "true",
    "yes",
    "on",
    "'x" + "y" * 20000 + "'",
    "[1, 'a', null, {}]",
    "{1: a, 2: b}",
    "&self [*self]",
    "'\\u0000'",
    "'é中文🙂'",
)
#: Fields with a length and format of their own (issue 32 item 4), and values for them that a
#: recipe must never get through with: each is an "absurd accepted" finding when it loads.
TARGETED_FIELDS: tuple[tuple[str, ...], ...] = (
    ("model", "path"),
    ("model", "container"),
    ("model", "precision"),
    ("resources", "gpu_type"),
    ("slurm", "time_limit"),
    ("benchmark", "concurrencies"),
    ("name",),
)
TARGETED_VALUES: tuple[str, ...] = (
    "'" + " " * 100_000 + "'",
    "'" + "x" * 100_000 + "'",
    "'🙂🙂🙂'",
    "'banana'",
    "'a\tb'",
    "'/models/x\n#SBATCH --x'",
    "[" + ", ".join(["1"] * 20_000) + "]",
    "'" + "1x" * 5_000 + "1'",
)
#: What the absurd-accepted check allows (the documented bounds, docs/recipes.md#bounded-input).
MAX_TEXT = 16_384
MAX_PATH = 4096
MAX_IMAGE = 1024
MAX_SHORT_NAME = 64
MAX_LEVELS = 256

#: Keys added next to existing ones.
HOSTILE_KEYS: tuple[str, ...] = ("schmea", "Schema", "1", "'../x'", "nodes", "wokers", "?")


@dataclass(frozen=True)
class Case:
    index: int
    source: str
    mutation: str
    text: str


@dataclass
class Result:
    outcome: str
    detail: str = ""
    seconds: float = 0.0


@dataclass
class Report:
    counts: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)
    slowest: float = 0.0

    def add(self, case: Case, result: Result, keep: int = 3) -> None:
        self.counts[result.outcome] += 1
        self.slowest = max(self.slowest, result.seconds)
        if result.outcome not in GOOD:
            shown = self.examples.setdefault(result.outcome, [])
            if len(shown) < keep:
                shown.append(f"{case.source} [{case.mutation}]: {result.detail[:600]}")


#: Outcomes that keep the promise.
GOOD = frozenset({"loaded", "refused"})
#: Findings (each one is a defect).
FINDINGS = (
    "traceback",
    "hang",
    "memory",
    "error-without-path",
    "message-over-2kB",
    "accepted-absurd-size",
)


def corpus_root() -> Path:
    return Path(os.environ.get("SRT_CORPUS", str(REPO.parent / "shared" / "corpus")))


def read_sources() -> list[tuple[str, str]]:
    """(label, text) of every recipe the project owns (examples/, tests/recipes/) and, when the
    corpus is there, every v2 corpus recipe."""
    owned = sorted((REPO / "examples").glob("*.yaml"))
    owned += sorted((REPO / "tests" / "recipes").glob("*.yaml"))
    out = [(str(p.relative_to(REPO)), p.read_text()) for p in owned]
    v2 = corpus_root() / "v2"
    if v2.is_dir():
        out += [(f"corpus/{p.relative_to(v2)}", p.read_text()) for p in sorted(v2.rglob("*.yaml"))]
    return out


# ------------------------------------------------------------------ mutations


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(node, dict):
        if not node:
            yield path
        for key, value in node.items():
            yield from _leaves(value, (*path, key))
    elif isinstance(node, list):
        if not node:
            yield path
        for i, value in enumerate(node):
            yield from _leaves(value, (*path, i))
    else:
        yield path


def _mappings(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(node, dict):
        yield path
        for key, value in node.items():
            yield from _mappings(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _mappings(value, (*path, i))


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    _get(doc, path[:-1])[path[-1]] = value
    return doc


def _dump(doc: Any) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=10_000)


def _dotted(path: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in path) or "$"


def _alias_bomb(levels: int) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels):
        refs = ", ".join([f"*a{i - 1}"] * 10)
        lines.append(f"a{i}: &a{i} [{refs}]")
    return "\n".join(lines)


def mutate(rng: random.Random, label: str, text: str, index: int) -> Case:
    """One mutation of one recipe (deterministic for a given ``rng`` state)."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        doc = None
    kind = rng.random()
    if not isinstance(doc, dict) or kind < 0.06:
        cut = rng.randrange(max(1, len(text)))
        return Case(index, label, f"truncated at {cut}", text[:cut])
    doc = copy.deepcopy(doc)
    if kind < 0.12:
        path = rng.choice(TARGETED_FIELDS)
        fragment = rng.choice(TARGETED_VALUES)
        parent = doc
        for key in path[:-1]:
            if not isinstance(parent.get(key), dict):
                parent[key] = {}
            parent = parent[key]
        parent[path[-1]] = _MARK
        mutated = _dump(doc).replace(f"'{_MARK}'", fragment).replace(_MARK, fragment)
        return Case(index, label, f"{_dotted(path)} = {fragment[:40]}", mutated)
    if kind < 0.62:
        leaves = list(_leaves(doc))
        path = rng.choice(leaves)
        fragment = rng.choice(HOSTILE_VALUES)
        marked = _dump(_set(doc, path, _MARK))
        mutated = marked.replace(f"'{_MARK}'", fragment).replace(_MARK, fragment)
        return Case(index, label, f"{_dotted(path)} = {fragment[:40]}", mutated)
    if kind < 0.74:
        leaves = [p for p in _leaves(doc) if p]
        path = rng.choice(leaves)
        parent = _get(doc, path[:-1])
        if isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent.pop(path[-1])
        return Case(index, label, f"drop {_dotted(path)}", _dump(doc))
    if kind < 0.86:
        path = rng.choice(list(_mappings(doc)))
        key = rng.choice(HOSTILE_KEYS)
        fragment = rng.choice(HOSTILE_VALUES)
        target = _get(doc, path)
        target[_MARK] = _MARK
        mutated = _dump(doc).replace(f"{_MARK}: {_MARK}", f"{key}: {fragment}")
        return Case(index, label, f"add {_dotted(path)}.{key} = {fragment[:30]}", mutated)
    if kind < 0.92:
        levels = rng.randrange(4, 10)
        mappings = [p for p in _mappings(doc) if p]
        path = rng.choice(mappings) if mappings else ()
        bomb = _alias_bomb(levels).replace("\n", "\n  ")
        marked = _dump(_set(doc, path, _MARK))
        mutated = marked.replace(f"'{_MARK}'", "\n  " + bomb).replace(_MARK, "\n  " + bomb)
        return Case(index, label, f"alias bomb 10^{levels} at {_dotted(path)}", mutated)
    if kind < 0.96:
        depth = rng.choice((50, 500, 5000, 50000))
        path = rng.choice(list(_leaves(doc)))
        marked = _dump(_set(doc, path, _MARK))
        nested = "[" * depth + "1" + "]" * depth
        mutated = marked.replace(f"'{_MARK}'", nested).replace(_MARK, nested)
        return Case(index, label, f"nesting {depth} at {_dotted(path)}", mutated)
    lines = text.splitlines()
    if len(lines) > 1:
        del lines[rng.randrange(len(lines))]
    return Case(index, label, "line dropped", "\n".join(lines))


def cases(count: int, seed: int, sources: list[tuple[str, str]]) -> Iterator[Case]:
    rng = random.Random(seed)
    for index in range(count):
        label, text = sources[rng.randrange(len(sources))]
        yield mutate(rng, label, text, index)


# ------------------------------------------------------------------ one case


def run_case(case: Case) -> Result:
    """Load and plan one case in this process; classify what happened."""
    from srt_planner import PlannerError, plan_allocation, plan_job
    from srt_schema.cluster import ClusterConfig
    from srt_schema.errors import RecipeError, SchemaError

    cluster = ClusterConfig(default_account="acct", default_partition="batch")
    start = time.perf_counter()

    def done(outcome: str, detail: str = "") -> Result:
        return Result(outcome, detail, time.perf_counter() - start)

    try:
        from srt_schema.load import load_recipe_text

        jobs = load_recipe_text(case.text, file="fuzz.yaml", cluster=cluster)
        for job in jobs:
            request = plan_allocation(job.recipe, cluster, runner_name=None)
            if request.nodes > MAX_PLANNED_NODES:
                return done("accepted-absurd-size", f"{request.nodes} nodes accepted")
            absurd = absurd_field(job.recipe)
            if absurd is not None:
                return done("accepted-absurd-size", absurd)
            nodes = [f"node-{i:04d}" for i in range(1, request.nodes + 1)]
            plan_job(job.recipe, cluster, nodes, "1234")
    except RecipeError as exc:
        for issue in exc.issues:
            if not issue.path.startswith("$"):
                return done("error-without-path", issue.render())
            if len(issue.render()) > MAX_MESSAGE:
                return done("message-over-2kB", f"{len(issue.render())} characters")
        return done("refused")
    except PlannerError as exc:
        message = str(exc)
        if len(message) > MAX_MESSAGE:
            return done("message-over-2kB", f"{len(message)} characters")
        if "$." not in message:
            return done("error-without-path", message)
        return done("refused")
    except SchemaError as exc:
        message = str(exc)
        if len(message) > MAX_MESSAGE:
            return done("message-over-2kB", f"{len(message)} characters")
        return done("refused")
    except MemoryError:
        return done("memory", "MemoryError")
    except RecursionError as exc:
        return done("traceback", f"RecursionError: {exc}")
    except Exception as exc:  # classifying every escape is the point
        frames = traceback.extract_tb(exc.__traceback__)
        where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "?"
        return done("traceback", f"{type(exc).__name__}: {str(exc)[:300]} at {where}")
    return done("loaded")


def _texts(node: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(node, str):
        yield path, node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _texts(value, f"{path}.{key}")
    elif isinstance(node, list | tuple):
        for i, value in enumerate(node):
            yield from _texts(value, f"{path}[{i}]")


def absurd_field(recipe: Any) -> str | None:
    """What a loaded recipe should not have got through with, else None: a text over its bound,
    a path, image or short name in the wrong form, a time limit Slurm refuses, too many levels."""
    import re

    import msgspec

    from srt_schema.time_limit import time_limit_seconds

    for where, text in _texts(msgspec.to_builtins(recipe), "$"):
        if len(text) > MAX_TEXT:
            return f"{where}: a text of {len(text)} characters accepted"
    model, res = recipe.model, recipe.resources
    if len(model.path) > MAX_PATH or model.path != model.path.strip():
        return f"$.model.path of {len(model.path)} characters (edge blanks?) accepted"
    if any(ord(c) < 32 for c in model.path):
        return "$.model.path with a control character accepted"
    if len(model.container) > MAX_IMAGE or re.search(r"\s", model.container):
        return f"$.model.container {model.container[:40]!r} accepted"
    short = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")
    if model.precision and not short.fullmatch(model.precision):
        return f"$.model.precision {model.precision[:40]!r} accepted"
    if res.gpu_type is not None and not short.fullmatch(res.gpu_type):
        return f"$.resources.gpu_type {res.gpu_type[:40]!r} accepted"
    if recipe.slurm.time_limit is not None:
        try:
            time_limit_seconds(recipe.slurm.time_limit)
        except ValueError:
            return f"$.slurm.time_limit {recipe.slurm.time_limit[:40]!r} accepted"
    levels = recipe.benchmark.concurrencies
    count = len(levels.split("x")) if isinstance(levels, str) else len(levels or ())
    if count > MAX_LEVELS:
        return f"$.benchmark.concurrencies with {count} levels accepted"
    return None


def _worker(conn: Connection, mem_mib: int) -> None:
    limit = mem_mib * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    sys.setrecursionlimit(10_000)
    while True:
        case = conn.recv()
        if case is None:
            return
        conn.send(run_case(case))


class Runner:
    """Cases in a worker process that is replaced when a case hangs or kills it."""

    def __init__(self, hang: float, mem_mib: int) -> None:
        self.hang, self.mem_mib = hang, mem_mib
        self.ctx = mp.get_context("fork")
        self._start()

    def _start(self) -> None:
        self.conn, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker, args=(child, self.mem_mib), daemon=True)
        self.proc.start()
        child.close()

    def _restart(self) -> None:
        self.proc.kill()
        self.proc.join()
        self._start()

    def run(self, case: Case) -> Result:
        self.conn.send(case)
        if not self.conn.poll(self.hang):
            self._restart()
            return Result("hang", f"no answer within {self.hang:g} s", self.hang)
        try:
            result: Result = self.conn.recv()
        except EOFError:
            code = self.proc.exitcode
            self._restart()
            return Result("memory", f"worker died (exit {code})")
        return result

    def close(self) -> None:
        self.conn.send(None)
        self.proc.join(timeout=5)
        if self.proc.is_alive():
            self.proc.kill()


def fuzz(
    count: int,
    seed: int,
    *,
    hang: float = 5.0,
    mem_mib: int = 2048,
    max_seconds: float | None = None,
) -> Report:
    """Run ``count`` cases (fewer if ``max_seconds`` runs out first)."""
    sources = read_sources()
    report = Report()
    runner = Runner(hang, mem_mib)
    deadline = time.monotonic() + max_seconds if max_seconds is not None else None
    try:
        for case in cases(count, seed, sources):
            if deadline is not None and time.monotonic() > deadline:
                break
            report.add(case, runner.run(case))
    finally:
        runner.close()
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--hang", type=float, default=5.0, help="seconds before a case is a hang")
    parser.add_argument("--mem-mib", type=int, default=2048, help="memory limit of the worker")
    parser.add_argument("--max-seconds", type=float, default=None, help="stop after this long")
    parser.add_argument("--seeds", default=None, help="a range of seeds, A-B (overrides --seed)")
    args = parser.parse_args()
    if args.seeds:
        first, _, last = args.seeds.partition("-")
        seeds = list(range(int(first), int(last or first) + 1))
    else:
        seeds = [args.seed]
    total = Report()
    for seed in seeds:
        started = time.perf_counter()
        report = fuzz(
            args.cases, seed, hang=args.hang, mem_mib=args.mem_mib, max_seconds=args.max_seconds
        )
        _print(report, f"seed {seed}", time.perf_counter() - started)
        total.counts.update(report.counts)
        total.slowest = max(total.slowest, report.slowest)
    if len(seeds) > 1:
        print(f"all seeds {seeds[0]}-{seeds[-1]}:")
        for outcome in ("loaded", "refused", *FINDINGS):
            print(f"  {outcome}: {total.counts[outcome]}")
    return 0


def _print(report: Report, label: str, elapsed: float) -> None:
    print(f"cases: {sum(report.counts.values())} ({label}) in {elapsed:.1f} s")
    for outcome in ("loaded", "refused"):
        print(f"  {outcome}: {report.counts[outcome]}")
    for finding in FINDINGS:
        print(f"  {finding}: {report.counts[finding]}")
        for example in report.examples.get(finding, []):
            print(f"      {example}")
    print(f"slowest case: {report.slowest:.2f} s")


if __name__ == "__main__":
    raise SystemExit(main())
