"""The comparison of runs against the first (the baseline), per concurrency (pure).

A window (one run at one concurrency) is excluded when its `validity.verdict` is `invalid`, or
when the rollup's verdict carries a reason of its own (not an invalid window's, which srt-bench
copies to the file): such a reason invalidates every window of the run. Excluded windows are
named with their reason codes and never enter a delta.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import msgspec

from srt_cli.compare.bootstrap import delta_interval, relative_interval
from srt_cli.compare.inputs import Missing, RunData
from srt_cli.compare.kpis import KPIS, WindowStats, build_window_stats
from srt_cli.compare.recipe_diff import (
    OVERLAY_CHARS,
    build_legends,
    build_recipe_diff,
    build_setting_values,
    build_version_drift,
    render_verdict,
)
from srt_schema.rollup import Rollup
from srt_schema.rollup_capacity import CapacityTarget

__all__ = [
    "Comparison",
    "Excluded",
    "KpiDelta",
    "Options",
    "Point",
    "RunSummary",
    "WindowDelta",
    "build_comparison",
    "invalid_windows",
]


class KpiDelta(msgspec.Struct, frozen=True, kw_only=True):
    kpi: str
    label: str
    unit: str
    better: str
    baseline: float | None
    value: float | None
    delta: float | None
    delta_pct: float | None
    #: 95% interval of `delta` (same unit), from the bootstrap; null without records.
    ci_low: float | None = None
    ci_high: float | None = None
    #: The interval excludes 0; null when there is no interval.
    significant: bool | None = None
    #: 95% interval of the relative change (%), from each replicate's own ratio (never below
    #: -100% for a non-negative KPI); null without records.
    ci_low_pct: float | None = None
    ci_high_pct: float | None = None


class WindowDelta(msgspec.Struct, frozen=True, kw_only=True):
    concurrency: int
    baseline: str
    run: str
    baseline_requests: int | None
    requests: int | None
    source: str
    kpis: tuple[KpiDelta, ...]


class Excluded(msgspec.Struct, frozen=True, kw_only=True):
    run: str
    concurrency: int
    reasons: tuple[str, ...]


class RunSummary(msgspec.Struct, frozen=True, kw_only=True):
    label: str
    path: str
    concurrencies: tuple[int, ...]
    records: bool
    #: vs the baseline (empty for the baseline itself)
    verdict: str = ""
    settings: tuple[str, ...] = ()
    version_drift: tuple[str, ...] = ()
    #: The run's name on charts: its label and its values of the settings that differed.
    legend: str = ""
    #: Its values of the settings that differed alone (the overlay charts' name for it).
    setting_values: str = ""


class Point(msgspec.Struct, frozen=True, kw_only=True):
    """One window on the Pareto chart and the throughput-latency curves."""

    run: str
    concurrency: int
    tok_s_per_user: float | None
    tok_s_per_gpu: float | None
    valid: bool
    #: Why the window is invalid (reason codes; empty when valid): its label on the chart.
    reasons: tuple[str, ...] = ()
    ttft_p50_ms: float | None = None
    e2el_p50_ms: float | None = None


class Comparison(msgspec.Struct, frozen=True, kw_only=True):
    baseline: str
    runs: tuple[RunSummary, ...]
    windows: tuple[WindowDelta, ...]
    excluded: tuple[Excluded, ...]
    missing: tuple[dict[str, str], ...]
    points: tuple[Point, ...]
    resamples: int
    seed: int
    confidence: float = 0.95
    #: The latency targets the runs declared (capacity searches'), each once: the Pareto chart
    #: draws the TPOT ones (srt_telemetry.targets).
    targets: tuple[CapacityTarget, ...] = ()


@dataclass(frozen=True)
class Options:
    resamples: int
    seed: int


def invalid_windows(rollup: Rollup) -> dict[int, tuple[str, ...]]:
    """concurrency -> reason codes, for every window that is not valid."""
    top = rollup.validity
    windows = [x for r in rollup.runs if r.validity is not None for x in r.validity.reasons]
    run_wide: list[str] = []
    if top is not None and top.verdict == "invalid":
        run_wide = [
            t.code
            for t in top.reasons
            if not any(w.code == t.code and t.detail.endswith(w.detail) for w in windows)
        ]
    out: dict[int, tuple[str, ...]] = {}
    for r in rollup.runs:
        if r.concurrency is None:
            continue
        own = [x.code for x in r.validity.reasons] if r.validity is not None else []
        if r.validity is not None and r.validity.verdict == "invalid" and not own:
            own = ["invalid"]
        codes = tuple(dict.fromkeys([*own, *run_wide]))
        if codes:
            out[r.concurrency] = codes
    return out


def _delta(kpi_key: str, a: WindowStats, b: WindowStats) -> KpiDelta:
    kpi = next(k for k in KPIS if k.key == kpi_key)
    va, vb = a.values.get(kpi_key), b.values.get(kpi_key)
    delta = vb - va if va is not None and vb is not None else None
    pct = delta / va * 100.0 if delta is not None and va else None
    lo = hi = lo_pct = hi_pct = None
    significant = None
    ra, rb = a.replicates.get(kpi_key), b.replicates.get(kpi_key)
    if delta is not None and ra and rb:
        interval = delta_interval(ra, rb)
        if interval is not None:
            lo, hi = interval
            significant = lo > 0 or hi < 0
        relative = relative_interval(ra, rb)
        if relative is not None:
            lo_pct, hi_pct = relative
    return KpiDelta(
        kpi=kpi.key,
        label=kpi.label,
        unit=kpi.unit,
        better=kpi.better,
        baseline=va,
        value=vb,
        delta=delta,
        delta_pct=pct,
        ci_low=lo,
        ci_high=hi,
        significant=significant,
        ci_low_pct=lo_pct,
        ci_high_pct=hi_pct,
    )


def _window_stats(run: RunData, opts: Options) -> dict[int, WindowStats]:
    out = {}
    for r in run.rollup.sorted_runs():
        if r.concurrency is None:
            continue
        out[r.concurrency] = build_window_stats(
            r,
            run.windows.get(r.concurrency),
            gpus=run.gpus.get(r.concurrency),
            seed=opts.seed,
            label=run.label,
            resamples=opts.resamples,
        )
    return out


def _points(
    run: RunData, stats: dict[int, WindowStats], bad: dict[int, tuple[str, ...]]
) -> list[Point]:
    points = []
    for c, s in stats.items():
        tpot = s.values.get("tpot_p50_ms")
        per_user = 1000.0 / tpot if tpot is not None and tpot > 0 else None
        per_gpu = s.values.get("tok_s_per_gpu")
        points.append(
            Point(
                run=run.label,
                concurrency=c,
                tok_s_per_user=per_user,
                tok_s_per_gpu=per_gpu,
                valid=c not in bad,
                reasons=bad.get(c, ()),
                ttft_p50_ms=s.values.get("ttft_p50_ms"),
                e2el_p50_ms=s.values.get("e2el_p50_ms"),
            )
        )
    return points


def build_comparison(runs: list[RunData], missing: list[Missing], opts: Options) -> Comparison:
    base = runs[0]
    order = {run.label: i for i, run in enumerate(runs)}
    stats = {run.label: _window_stats(run, opts) for run in runs}
    bad = {run.label: invalid_windows(run.rollup) for run in runs}
    excluded = [
        Excluded(run=run.label, concurrency=c, reasons=codes)
        for run in runs
        for c, codes in sorted(bad[run.label].items())
    ]
    summaries = []
    windows = []
    points = []
    for i, run in enumerate(runs):
        points.extend(_points(run, stats[run.label], bad[run.label]))
        summary = RunSummary(
            label=run.label,
            path=str(run.path),
            concurrencies=tuple(sorted(stats[run.label])),
            records=bool(run.windows),
        )
        if i > 0:
            changes = (
                build_recipe_diff(base.recipe, run.recipe)
                if base.recipe is not None and run.recipe is not None
                else None
            )
            summary = msgspec.structs.replace(
                summary,
                verdict=render_verdict(changes),
                settings=tuple(c.path for c in changes or ()),
                version_drift=tuple(
                    build_version_drift(
                        base.fingerprints,
                        run.fingerprints,
                        baseline_srtctl=base.srtctl_version,
                        other_srtctl=run.srtctl_version,
                    )
                ),
            )
            for c, a in stats[base.label].items():
                b = stats[run.label].get(c)
                if b is None or c in bad[base.label] or c in bad[run.label]:
                    continue
                windows.append(
                    WindowDelta(
                        concurrency=c,
                        baseline=base.label,
                        run=run.label,
                        baseline_requests=a.requests,
                        requests=b.requests,
                        source="records" if a.source == b.source == "records" else "rollup",
                        kpis=tuple(
                            d
                            for k in KPIS
                            if (d := _delta(k.key, a, b)).baseline is not None
                            or d.value is not None
                        ),
                    )
                )
        summaries.append(summary)
    differed = list(dict.fromkeys(p for s in summaries for p in s.settings))
    recipes = [run.recipe for run in runs]
    legends = build_legends([run.label for run in runs], recipes, differed)
    values = build_setting_values(recipes, differed, width=OVERLAY_CHARS)
    summaries = [
        msgspec.structs.replace(s, legend=legend, setting_values=v)
        for s, legend, v in zip(summaries, legends, values, strict=True)
    ]
    return Comparison(
        baseline=base.label,
        runs=tuple(summaries),
        windows=tuple(sorted(windows, key=lambda w: (w.concurrency, order[w.run]))),
        excluded=tuple(excluded),
        missing=tuple({"run": m.label, "path": str(m.path), "why": m.why} for m in missing),
        points=tuple(p for p in points if _finite(p)),
        resamples=opts.resamples,
        seed=opts.seed,
        targets=tuple(
            dict.fromkeys(
                t
                for run in runs
                if run.rollup.capacity is not None
                for t in run.rollup.capacity.targets
            )
        ),
    )


def _finite(p: Point) -> bool:
    return all(v is not None and math.isfinite(v) for v in (p.tok_s_per_user, p.tok_s_per_gpu))
