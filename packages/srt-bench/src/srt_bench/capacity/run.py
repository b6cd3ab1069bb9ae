"""Run a capacity search: sa-bench phases at the concurrencies (or request rates) the search
picks, one at a time (the thin shell around `search.decide`).

A rate point (`axis: request_rate`) is a phase of `requests_per_point(rate, seconds_per_point)`
measured requests arriving at that rate (open loop: its in-flight cap is its request count, so no
arrival waits for a slot); its result file adds `_rate_<r>` to the usual name.

Each point is an ordinary sa-bench phase (warmup, test prompt, formal run, result JSON and
measurement window), so every point lands in the rollup's `runs`; a phase that fails the request
gate is an overloaded point, not the end of the run. The search's own record (every point's
readings, why it was chosen, why the search stopped, the confidence statement) is written to
`<result folder>/capacity.json`, which the rollup embeds as `capacity`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import assert_never

import msgspec

from srt_bench.capacity.outcome import build_capacity_result, format_point
from srt_bench.capacity.readings import SearchSpec, build_readings
from srt_bench.capacity.search import Measure, Stop, decide
from srt_bench.config import BenchRunConfig
from srt_bench.errors import BenchDatasetError
from srt_bench.sa_bench import PhaseLoad, PhaseSummary, run_sa_bench
from srt_bench.sa_bench_settings import SaBenchSettings, result_dir_name
from srt_bench.validity import build_client_validity
from srt_schema.bench_result import BenchResult, decode_bench_result
from srt_schema.capacity_axis import format_rate, requests_per_point
from srt_schema.rollup_capacity import CapacityPoint, CapacityResult

__all__ = ["CAPACITY_FILE", "build_load", "build_point", "read_capacity", "run_capacity"]

CAPACITY_FILE = "capacity.json"

Log = Callable[[str], None]


def build_point(spec: SearchSpec, doc: BenchResult, *, why: str, result_path: str) -> CapacityPoint:
    """One measured point from its sa-bench result (pure)."""
    readings = build_readings(doc, spec.targets)
    outcome = doc.benchmark_outcome
    overloaded = outcome is None or outcome.status != "passed"
    invalid = tuple(f"{r.code}: {r.detail}" for r in build_client_validity(doc).reasons)
    on_rate = spec.axis == "request_rate"
    return CapacityPoint(
        concurrency=doc.max_concurrency or 0,
        axis=spec.axis,
        request_rate=_rate(doc) if on_rate else None,
        meets=not overloaded and not invalid and all(r.meets for r in readings),
        invalid=invalid,
        overloaded=overloaded,
        completed=doc.completed or 0,
        failed=doc.failed or 0,
        readings=readings,
        why=why,
        result_path=result_path,
    )


def build_load(spec: SearchSpec, value: int) -> PhaseLoad:
    """The sa-bench load of the point at `value` on the search's axis (pure): a concurrency, or a
    rate with its request count, which is also its in-flight cap (no arrival waits)."""
    if spec.axis == "concurrency":
        return PhaseLoad(concurrency=value)
    rate = spec.rate(value)
    requests = requests_per_point(rate, spec.seconds_per_point)
    return PhaseLoad(concurrency=requests, request_rate=rate, requests=requests)


def _rate(doc: BenchResult) -> float:
    rate = doc.request_rate
    return float(rate) if rate is not None else math.inf


def _read_doc(path: Path) -> BenchResult:
    try:
        return decode_bench_result(path.read_bytes())
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise BenchDatasetError(f"cannot read the sa-bench result {path}: {exc}") from exc


class _Search:
    """The chooser sa-bench calls between phases: record the last point, decide the next."""

    def __init__(self, spec: SearchSpec, out_dir: Path, log: Log) -> None:
        self.spec = spec
        self.out_dir = out_dir
        self.log = log
        self.points: list[CapacityPoint] = []
        #: Why the phase sa-bench is running was chosen.
        self.why = ""
        self.stop: Stop | None = None

    def __call__(self, summaries: Sequence[PhaseSummary]) -> PhaseLoad | None:
        if len(summaries) > len(self.points):
            last = summaries[-1]
            point = build_point(
                self.spec,
                _read_doc(last.result_path),
                why=self.why,
                result_path=last.result_path.relative_to(self.out_dir).as_posix(),
            )
            self.points.append(point)
            self.log(f"capacity: point {len(self.points)}: {format_point(self.spec, point)}")
        decision = decide(self.spec, self.points)
        match decision:
            case Measure(value=value, why=why):
                self.why = why
                name = self.spec.point_name(value)
                self.log(f"capacity: point {len(self.points) + 1}: {name}: {why}")
                return build_load(self.spec, value)
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
    show = spec.show
    where = "concurrency" if spec.axis == "concurrency" else "request rate"
    each = ""
    if spec.axis == "request_rate":
        each = f"; each point {spec.seconds_per_point:g} s of arrivals, none waiting for a slot"
    log(
        f"capacity: the highest {where} in [{show(spec.min_value)}, {show(spec.max_value)}] "
        f"with {targets}; at most {spec.max_points} points, tolerance {spec.tolerance:.0%}" + each
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
    measured = ", ".join(show(spec.value_of(p)) for p in result.points)
    found: object = result.capacity
    if spec.axis == "request_rate":
        rate = result.capacity_request_rate
        found = None if rate is None else f"{format_rate(rate)} req/s"
    log(f"capacity: {result.statement}")
    log(
        f"capacity: {result.status}: capacity {found} "
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
