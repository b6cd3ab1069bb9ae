"""Run a capacity search: sa-bench phases at the concurrencies the search picks, one at a time
(the thin shell around `search.decide`).

Each point is an ordinary sa-bench phase (warmup, test prompt, formal run, result JSON and
measurement window), so every point lands in the rollup's `runs`; a phase that fails the request
gate is an overloaded point, not the end of the run. The search's own record (every point's
readings, why it was chosen, why the search stopped, the confidence statement) is written to
`<result folder>/capacity.json`, which the rollup embeds as `capacity`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, assert_never

import msgspec

from srt_bench.capacity.outcome import build_capacity_result, format_point
from srt_bench.capacity.readings import SearchSpec, build_readings
from srt_bench.capacity.search import Measure, Stop, decide
from srt_bench.config import BenchRunConfig
from srt_bench.errors import BenchDatasetError
from srt_bench.sa_bench import PhaseSummary, run_sa_bench
from srt_bench.sa_bench_settings import SaBenchSettings, result_dir_name
from srt_bench.validity import build_client_validity
from srt_schema.rollup_capacity import CapacityPoint, CapacityResult

__all__ = ["CAPACITY_FILE", "build_point", "read_capacity", "run_capacity"]

CAPACITY_FILE = "capacity.json"

Log = Callable[[str], None]


def build_point(
    spec: SearchSpec, doc: Mapping[str, Any], *, why: str, result_path: str
) -> CapacityPoint:
    """One measured point from its sa-bench result document (pure)."""
    readings = build_readings(doc, spec.targets)
    outcome = doc.get("benchmark_outcome") or {}
    overloaded = outcome.get("status") != "passed"
    invalid = tuple(f"{r.code}: {r.detail}" for r in build_client_validity(doc).reasons)
    return CapacityPoint(
        concurrency=int(doc["max_concurrency"]),
        meets=not overloaded and not invalid and all(r.meets for r in readings),
        invalid=invalid,
        overloaded=overloaded,
        completed=int(doc.get("completed") or 0),
        failed=int(doc.get("failed") or 0),
        readings=readings,
        why=why,
        result_path=result_path,
    )


def _read_doc(path: Path) -> dict[str, Any]:
    try:
        doc = msgspec.json.decode(path.read_bytes())
    except (OSError, msgspec.DecodeError) as exc:
        raise BenchDatasetError(f"cannot read the sa-bench result {path}: {exc}") from exc
    if not isinstance(doc, dict):
        raise BenchDatasetError(f"{path}: expected a JSON object")
    return doc


class _Search:
    """The chooser sa-bench calls between phases: record the last point, decide the next."""

    def __init__(self, spec: SearchSpec, out_dir: Path, log: Log) -> None:
        self.spec = spec
        self.out_dir = out_dir
        self.log = log
        self.points: list[CapacityPoint] = []
        self.why: dict[int, str] = {}
        self.stop: Stop | None = None

    def __call__(self, summaries: Sequence[PhaseSummary]) -> int | None:
        if len(summaries) > len(self.points):
            last = summaries[-1]
            point = build_point(
                self.spec,
                _read_doc(last.result_path),
                why=self.why.pop(last.concurrency),
                result_path=last.result_path.relative_to(self.out_dir).as_posix(),
            )
            self.points.append(point)
            self.log(f"capacity: point {len(self.points)}: {format_point(self.spec, point)}")
        decision = decide(self.spec, self.points)
        match decision:
            case Measure(concurrency=c, why=why):
                self.why[c] = why
                self.log(f"capacity: point {len(self.points) + 1}: concurrency {c}: {why}")
                return c
            case Stop(why=why):
                self.stop = decision
                self.log(f"capacity: stop after {len(self.points)} points: {why}")
                return None
            case _:
                assert_never(decision)


def run_capacity(
    config: BenchRunConfig,
    settings: SaBenchSettings,
    spec: SearchSpec,
    out_dir: Path,
    *,
    window_dir: Path | None = None,
    log: Log = lambda _line: None,
) -> CapacityResult:
    """Search, write `capacity.json` beside the result files, and return what was found."""
    targets = ", ".join(f"{t.name} <= {t.limit_ms:g}" for t in spec.targets)
    log(
        f"capacity: the highest concurrency in [{spec.min_concurrency}, {spec.max_concurrency}] "
        f"with {targets}; at most {spec.max_points} points, tolerance {spec.tolerance:.0%}"
    )
    search = _Search(spec, out_dir, log)
    run_sa_bench(config, settings, out_dir, window_dir=window_dir, log=log, choose=search)
    assert search.stop is not None  # the chooser returned None only after deciding to stop
    result = build_capacity_result(spec, search.points, search.stop)
    folder = out_dir / result_dir_name(settings)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / CAPACITY_FILE).write_bytes(
        msgspec.json.format(msgspec.json.encode(result), indent=2) + b"\n"
    )
    measured = ", ".join(str(p.concurrency) for p in result.points)
    log(f"capacity: {result.statement}")
    log(
        f"capacity: {result.status}: capacity {result.capacity} "
        f"({len(result.points)} points measured: {measured})"
    )
    return result


def read_capacity(out_dir: Path) -> CapacityResult | None:
    """The `capacity.json` of the sa-bench result folder under `out_dir`, if a search ran."""
    found = sorted(out_dir.glob(f"sa-bench_*/{CAPACITY_FILE}"))
    if not found:
        return None
    try:
        return msgspec.json.decode(found[-1].read_bytes(), type=CapacityResult)
    except (OSError, msgspec.DecodeError) as exc:
        raise BenchDatasetError(f"cannot read {found[-1]}: {exc}") from exc
