"""The sa-bench per-concurrency result files, as the dashboard's latency part needs them.

Files: `RUN_DIR/*/results_concurrency_<c>_gpus_<n>[...].json` (srt-bench writes one per
concurrency into `sa-bench_isl_<isl>_osl_<osl>/`; docs/telemetry-and-bench.md#sa-bench-results).
Decoded with `ResultView`, a subset (unknown fields ignored; a file that does not decode is named
in the notes and skipped, so one odd file never costs the page).

Per concurrency (`Phase`): the client's own p50/p90/p99 and mean of TTFT, TPOT, ITL and E2EL
(`<stat>_<metric>_ms`; a percentile the file lacks is computed from the per-request arrays, with
the client's method: linear interpolation between closest ranks), output tok/s per GPU (the
file's `output_throughput_per_gpu`), tok/s per user (1000 / mean TPOT: the decode speed one
request sees) and the measurement window (`benchmark_{start,end}_time_unix`).

Distributions (`Phase.quantiles`): `QUANTILES` points of each metric's empirical distribution
over the successful requests, from the per-request arrays (`ttfts`, `itls`, `output_lens`,
`errors`, `e2els`, `tpots`), with the definitions of docs/telemetry-and-bench.md#metric-definitions
(the client's: E2EL send to end of stream, TPOT = (E2EL - TTFT) / (output tokens - 1), ITL per
chunk). A file older than `e2els` falls back to E2EL = TTFT + sum(ITL) and TPOT = sum(ITL) /
(output tokens - 1), the time to the last chunk carrying text. `percentile` is the same function
as `srt_schema.bench_result.percentile` (with `q` in [0, 1]); tests/test_contract_dashboard.py
holds the two and the view equal to the writer's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import msgspec

__all__ = [
    "METRICS",
    "QUANTILES",
    "STATS",
    "Metric",
    "Phase",
    "ResultView",
    "build_phase",
    "percentile",
    "read_phases",
]

Metric = Literal["ttft", "tpot", "itl", "e2el"]
METRICS: tuple[Metric, ...] = ("ttft", "tpot", "itl", "e2el")
STATS = ("p50", "p90", "p99")
#: Points per distribution (the quantiles 0, 1/QUANTILES, ..., up to `TOP_QUANTILE`).
QUANTILES = 200
#: The distributions stop here so that one outlier does not squash the rest of the curve.
TOP_QUANTILE = 0.999
_RESULT = re.compile(r"^results_concurrency_(\d+)_gpus_\d+.*\.json$")


class ResultView(msgspec.Struct, frozen=True, kw_only=True):
    max_concurrency: int | None = None
    total_gpus: int | None = None
    isl: int | None = None
    osl: int | None = None
    completed: int | None = None
    failed: int | None = None
    output_throughput: float | None = None
    output_throughput_per_gpu: float | None = None
    benchmark_start_time_unix: float | None = None
    benchmark_end_time_unix: float | None = None
    ttfts: tuple[float | None, ...] = ()
    itls: tuple[tuple[float, ...], ...] = ()
    output_lens: tuple[int | None, ...] = ()
    errors: tuple[str | None, ...] = ()
    e2els: tuple[float, ...] | None = None
    tpots: tuple[float | None, ...] | None = None
    itl_definition: str | None = None
    mean_ttft_ms: float | None = None
    p50_ttft_ms: float | None = None
    p90_ttft_ms: float | None = None
    p99_ttft_ms: float | None = None
    mean_tpot_ms: float | None = None
    p50_tpot_ms: float | None = None
    p90_tpot_ms: float | None = None
    p99_tpot_ms: float | None = None
    mean_itl_ms: float | None = None
    p50_itl_ms: float | None = None
    p90_itl_ms: float | None = None
    p99_itl_ms: float | None = None
    mean_e2el_ms: float | None = None
    p50_e2el_ms: float | None = None
    p90_e2el_ms: float | None = None
    p99_e2el_ms: float | None = None


@dataclass(frozen=True)
class Phase:
    """One concurrency's results (None = not known)."""

    concurrency: int
    label: str
    source: str
    start: float | None = None
    end: float | None = None
    completed: int | None = None
    failed: int | None = None
    isl: int | None = None
    osl: int | None = None
    tok_s_per_gpu: float | None = None
    tok_s_per_user: float | None = None
    #: How the file's ITL was computed ("per-chunk"); None for a file older than the field.
    itl_definition: str | None = None
    #: metric -> stat ("p50", "p90", "p99", "mean") -> ms
    stats: dict[str, dict[str, float | None]] = field(default_factory=dict)
    #: metric -> [(quantile, ms)] of the successful requests
    quantiles: dict[str, list[tuple[float, float]]] = field(default_factory=dict)


def percentile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks of sorted values, `q` in [0, 1]."""
    rank = (len(ordered) - 1) * q
    lo, hi = math.floor(rank), math.ceil(rank)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (rank - lo)


def _samples(r: ResultView) -> dict[Metric, list[float]]:
    """Per-request values in ms of the successful requests (see the module docstring)."""
    out: dict[Metric, list[float]] = {m: [] for m in METRICS}
    n = len(r.ttfts)
    e2els = r.e2els if r.e2els is not None and len(r.e2els) == n else None
    tpots = r.tpots if r.tpots is not None and len(r.tpots) == n else None
    for i, ttft in enumerate(r.ttfts):
        error = r.errors[i] if i < len(r.errors) else ""
        if error or ttft is None:
            continue
        gaps = r.itls[i] if i < len(r.itls) else ()
        tokens = r.output_lens[i] if i < len(r.output_lens) else None
        out["ttft"].append(ttft * 1000.0)
        out["itl"].extend(g * 1000.0 for g in gaps)
        e2el = e2els[i] if e2els is not None else ttft + math.fsum(gaps)
        out["e2el"].append(e2el * 1000.0)
        if tpots is not None:
            if (tpot := tpots[i]) is not None:
                out["tpot"].append(tpot * 1000.0)
        elif tokens is not None and tokens >= 2:
            out["tpot"].append((e2el - ttft) / (tokens - 1) * 1000.0)
    return out


def _quantiles(values: list[float]) -> list[tuple[float, float]]:
    if not values:
        return []
    ordered = sorted(values)
    qs = [min(i / QUANTILES, TOP_QUANTILE) for i in range(QUANTILES + 1)]
    return [(q, percentile(ordered, q)) for q in dict.fromkeys(qs)]


def build_phase(r: ResultView, *, concurrency: int, label: str, source: str) -> Phase:
    samples = _samples(r)
    given = msgspec.structs.asdict(r)  # the client's own numbers, `<stat>_<metric>_ms`
    stats: dict[str, dict[str, float | None]] = {}
    for m in METRICS:
        ordered: list[float] | None = None
        row: dict[str, float | None] = {"mean": given[f"mean_{m}_ms"]}
        for stat in STATS:
            value = given[f"{stat}_{m}_ms"]
            if value is None and samples[m]:
                ordered = ordered or sorted(samples[m])
                value = percentile(ordered, int(stat[1:]) / 100.0)
            row[stat] = value
        stats[m] = row
    tpot = r.mean_tpot_ms
    return Phase(
        concurrency=concurrency,
        label=label,
        source=source,
        start=r.benchmark_start_time_unix,
        end=r.benchmark_end_time_unix,
        completed=r.completed,
        failed=r.failed,
        isl=r.isl,
        osl=r.osl,
        tok_s_per_gpu=r.output_throughput_per_gpu,
        tok_s_per_user=1000.0 / tpot if tpot else None,
        itl_definition=r.itl_definition,
        stats=stats,
        quantiles={m: _quantiles(samples[m]) for m in METRICS},
    )


def read_phases(run_dir: Path) -> tuple[list[Phase], list[str]]:
    """Every result file under RUN_DIR's sub-folders, sorted by (folder, concurrency); notes."""
    found: list[tuple[str, int, Path]] = []
    for path in sorted(run_dir.glob("*/results_concurrency_*.json")):
        m = _RESULT.match(path.name)
        if m is not None:
            found.append((path.parent.name, int(m.group(1)), path))
    found.sort(key=lambda f: (f[0], f[1], f[2].name))
    folders = {f[0] for f in found}
    phases: list[Phase] = []
    notes: list[str] = []
    for folder, c, path in found:
        try:
            view = msgspec.json.decode(path.read_bytes(), type=ResultView)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
            notes.append(f"{path}: not shown ({exc})")
            continue
        label = f"c={c}" if len(folders) == 1 else f"{folder} c={c}"
        rel = f"{folder}/{path.name}"
        phases.append(build_phase(view, concurrency=c, label=label, source=rel))
    return phases, notes
