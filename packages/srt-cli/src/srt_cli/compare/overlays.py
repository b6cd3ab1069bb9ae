"""The runs of a comparison drawn on the same axes (pure): their throughput-latency curves and,
per concurrency, the distribution of each latency, one line per run, named by its legend (the
settings that differed, `recipe_diff.build_legends`).

Curves: output tok/s per GPU against TTFT p50 and against E2EL p50, one point per concurrency
(`Point`, the numbers the delta tables use); an invalid window is a hollow point labelled with
its reason codes and left out of the line. Distributions: the share of a run's successful
requests at or below each latency (TTFT, TPOT, ITL pooled over requests, E2EL), `QUANTILES`
points up to `TOP_QUANTILE` (one outlier does not squash the rest), from the per-request records
of the result files (`records.Window`) with the one percentile function
(`srt_schema.bench_result.percentile`); a concurrency only one run measured gets no chart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from srt_cli.compare.inputs import RunData
from srt_cli.compare.records import Window
from srt_schema.bench_result import percentile

__all__ = [
    "METRICS",
    "QUANTILES",
    "Distribution",
    "build_distributions",
]

#: (key, label) of each latency drawn, in page order.
METRICS: tuple[tuple[str, str], ...] = (
    ("ttft", "TTFT"),
    ("tpot", "TPOT"),
    ("itl", "ITL"),
    ("e2el", "E2EL"),
)
QUANTILES = 100
TOP_QUANTILE = 0.999


@dataclass(frozen=True)
class Distribution:
    """One metric at one concurrency: per run (its label), [(share of requests, ms)]."""

    metric: str
    label: str
    concurrency: int
    runs: tuple[tuple[str, tuple[tuple[float, float], ...]], ...]


def _samples(window: Window, metric: str) -> Sequence[float]:
    match metric:
        case "ttft":
            return window.ttft_ms
        case "tpot":
            return window.tpot_ms or ()
        case "itl":
            return [g for gaps in window.itl_ms for g in gaps]
        case "e2el":
            return window.e2el_ms or ()
    raise ValueError(f"unknown metric {metric!r}")


def _quantiles(values: Sequence[float]) -> tuple[tuple[float, float], ...]:
    ordered = sorted(values)
    steps = [TOP_QUANTILE * i / QUANTILES for i in range(QUANTILES + 1)]
    return tuple((q, percentile(ordered, q * 100.0)) for q in steps)


def build_distributions(runs: Sequence[RunData]) -> list[Distribution]:
    """Every (metric, concurrency) that two or more runs measured, runs in the given order."""
    concurrencies = sorted({c for run in runs for c in run.windows})
    out = []
    for metric, label in METRICS:
        for c in concurrencies:
            per_run = []
            for run in runs:
                window = run.windows.get(c)
                values = _samples(window, metric) if window is not None else ()
                if values:
                    per_run.append((run.label, _quantiles(values)))
            if len(per_run) >= 2:
                out.append(Distribution(metric, label, c, tuple(per_run)))
    return out
