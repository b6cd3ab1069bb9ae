"""The KPIs `srtctl compare` reports per concurrency, their point estimates and bootstrap
replicates (pure).

From the per-request records when the window has them (definitions as srt_bench.stats: output
tok/s = output tokens of successful requests / window duration; TTFT, TPOT, E2EL percentiles over
requests; ITL percentiles over the pooled gaps), else the rollup's numbers without an interval.
Per GPU divides by the window's GPU count (the result file's `total_gpus`). J/token is the
rollup's `energy.joules_per_output_token` (no interval: energy is one number per window).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import chain
from typing import Literal

from srt_cli.compare.bootstrap import (
    percentile,
    percentile_replicates,
    pooled_percentile_replicates,
    rng_for,
    sum_replicates,
)
from srt_cli.compare.records import Window
from srt_schema.rollup import RollupRun

__all__ = ["KPIS", "Kpi", "WindowStats", "build_window_stats"]


@dataclass(frozen=True)
class Kpi:
    key: str
    label: str
    unit: str
    better: Literal["higher", "lower"]


KPIS: tuple[Kpi, ...] = (
    Kpi("output_tok_s", "output tok/s", "tok/s", "higher"),
    Kpi("tok_s_per_gpu", "tok/s per GPU", "tok/s", "higher"),
    Kpi("ttft_p50_ms", "TTFT p50", "ms", "lower"),
    Kpi("ttft_p99_ms", "TTFT p99", "ms", "lower"),
    Kpi("itl_p50_ms", "ITL p50", "ms", "lower"),
    Kpi("itl_p99_ms", "ITL p99", "ms", "lower"),
    Kpi("tpot_p50_ms", "TPOT p50", "ms", "lower"),
    Kpi("tpot_p99_ms", "TPOT p99", "ms", "lower"),
    Kpi("e2el_p50_ms", "E2EL p50", "ms", "lower"),
    Kpi("e2el_p99_ms", "E2EL p99", "ms", "lower"),
    Kpi("j_per_token", "J per output token", "J", "lower"),
)


@dataclass
class WindowStats:
    """One run's window: point estimates (None = not measured) and replicates per KPI."""

    concurrency: int
    source: Literal["records", "rollup"]
    requests: int | None
    gpus: int | None
    values: dict[str, float | None] = field(default_factory=dict)
    replicates: dict[str, list[float]] = field(default_factory=dict)


def _finite(v: float | None) -> float | None:
    return v if v is not None and math.isfinite(v) else None


def _percentiles(
    stats: WindowStats,
    name: str,
    values: tuple[float, ...] | None,
    *,
    seed: int,
    label: str,
    resamples: int,
) -> None:
    if not values:
        return
    ordered = sorted(values)
    stats.values[f"{name}_p50_ms"] = percentile(ordered, 50.0)
    stats.values[f"{name}_p99_ms"] = percentile(ordered, 99.0)
    if resamples:
        rng = rng_for(seed, label, stats.concurrency, name)
        reps = percentile_replicates(values, (50.0, 99.0), rng=rng, resamples=resamples)
        stats.replicates[f"{name}_p50_ms"] = [r[0] for r in reps]
        stats.replicates[f"{name}_p99_ms"] = [r[1] for r in reps]


def _from_records(
    stats: WindowStats, window: Window, *, seed: int, label: str, resamples: int
) -> None:
    if window.duration > 0:
        scale = 1.0 / window.duration
        stats.values["output_tok_s"] = sum(window.output_lens) * scale
        if resamples:
            rng = rng_for(seed, label, stats.concurrency, "output")
            reps = sum_replicates(window.output_lens, scale, rng=rng, resamples=resamples)
            stats.replicates["output_tok_s"] = [r[0] for r in reps]
    _percentiles(stats, "ttft", window.ttft_ms, seed=seed, label=label, resamples=resamples)
    _percentiles(stats, "tpot", window.tpot_ms, seed=seed, label=label, resamples=resamples)
    _percentiles(stats, "e2el", window.e2el_ms, seed=seed, label=label, resamples=resamples)
    pooled = list(chain.from_iterable(window.itl_ms))
    pooled.sort()
    if pooled:
        stats.values["itl_p50_ms"] = percentile(pooled, 50.0)
        stats.values["itl_p99_ms"] = percentile(pooled, 99.0)
        if resamples:
            rng = rng_for(seed, label, stats.concurrency, "itl")
            reps = pooled_percentile_replicates(
                window.itl_ms, (50.0, 99.0), rng=rng, resamples=resamples, pooled=pooled
            )
            stats.replicates["itl_p50_ms"] = [r[0] for r in reps]
            stats.replicates["itl_p99_ms"] = [r[1] for r in reps]


def build_window_stats(
    run: RollupRun,
    window: Window | None,
    *,
    gpus: int | None,
    seed: int,
    label: str,
    resamples: int,
) -> WindowStats:
    concurrency = run.concurrency or 0
    if window is not None:
        stats = WindowStats(
            concurrency=concurrency,
            source="records",
            requests=window.requests,
            gpus=window.gpus or gpus,
        )
        _from_records(stats, window, seed=seed, label=label, resamples=resamples)
    else:
        stats = WindowStats(
            concurrency=concurrency,
            source="rollup",
            requests=int(run.completed_requests) if run.completed_requests is not None else None,
            gpus=gpus,
        )
        stats.values.update(
            {
                "output_tok_s": _finite(run.throughput_toks),
                "ttft_p50_ms": _finite(run.ttft_median_ms),
                "ttft_p99_ms": _finite(run.ttft_p99_ms),
                "itl_p50_ms": _finite(run.itl_median_ms),
                "itl_p99_ms": _finite(run.itl_p99_ms),
                "tpot_p50_ms": _finite(run.tpot_median_ms),
                "tpot_p99_ms": _finite(run.tpot_p99_ms),
            }
        )
    # The rollup's TPOT when the records predate per-request latency.
    if stats.values.get("tpot_p50_ms") is None:
        stats.values["tpot_p50_ms"] = _finite(run.tpot_median_ms)
        stats.values["tpot_p99_ms"] = _finite(run.tpot_p99_ms)
    out = stats.values.get("output_tok_s")
    if out is not None and stats.gpus:
        stats.values["tok_s_per_gpu"] = out / stats.gpus
        if "output_tok_s" in stats.replicates:
            stats.replicates["tok_s_per_gpu"] = [
                v / stats.gpus for v in stats.replicates["output_tok_s"]
            ]
    if run.energy is not None:
        stats.values["j_per_token"] = _finite(run.energy.joules_per_output_token)
    return stats
