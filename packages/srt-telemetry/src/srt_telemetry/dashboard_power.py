"""The dashboard's power part (pure, except `read_gpu_samples`): GPU power per node and per GPU
from `samples.csv`, the power charts with the benchmark windows shaded, and the plain-words
statement of whether the power numbers are publishable (`verdict_html`).

Per-GPU charts: one line per `host/gpu`; one chart per node when there are several nodes, and at
most `MAX_LINES` lines per chart (a node with more GPUs gets one chart per group of 8).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from srt_telemetry.power_samples import read_samples
from srt_telemetry.reasons import explain
from srt_telemetry.rollup_view import PowerSummaryView, RunEnergyView
from srt_telemetry.svg import Band, Series, line_chart

__all__ = [
    "MAX_LINES",
    "MAX_POINTS",
    "GpuSamples",
    "Points",
    "Window",
    "downsample",
    "gpu_power_charts",
    "power_chart",
    "read_gpu_samples",
    "verdict_html",
]

MAX_POINTS = 1500  # per line; longer series are averaged in buckets
MAX_LINES = 8  # per chart

Points = list[tuple[float, float]]
Window = tuple[float, float, str]  # start, end, label ("c=4")


@dataclass
class GpuSamples:
    node_sums: dict[str, Points] = field(default_factory=dict)
    per_gpu: dict[str, dict[int, Points]] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)


def read_gpu_samples(path: Path) -> GpuSamples:
    """Node sums (one point per collection cycle, at the cycle's mean time) and per-GPU series."""
    read = read_samples(path)
    out = GpuSamples(reasons=read.reasons)
    cycles: dict[str, dict[int, list[tuple[float, float]]]] = {}
    for s in read.samples:
        cycles.setdefault(s.hostname, {}).setdefault(s.scrape_seq, []).append(
            (s.timestamp_unix, s.power_w)
        )
        out.per_gpu.setdefault(s.hostname, {}).setdefault(s.gpu_index, []).append(
            (s.timestamp_unix, s.power_w)
        )
    for host, by_seq in sorted(cycles.items()):
        out.node_sums[host] = sorted(
            (sum(t for t, _ in rows) / len(rows), sum(w for _, w in rows))
            for rows in by_seq.values()
        )
    out.per_gpu = {
        host: {gpu: sorted(pts) for gpu, pts in sorted(gpus.items())}
        for host, gpus in sorted(out.per_gpu.items())
    }
    return out


def downsample(points: Points) -> Points:
    if len(points) <= MAX_POINTS:
        return points
    step = math.ceil(len(points) / MAX_POINTS)
    out = []
    for i in range(0, len(points), step):
        chunk = points[i : i + step]
        out.append((chunk[0][0], sum(p[1] for p in chunk) / len(chunk)))
    return out


def power_chart(
    title: str, series: Mapping[str, Points], windows: Sequence[Window], t0: float, empty: str
) -> str:
    """Power over time (s since `t0`), one line per entry, the windows shaded and labelled."""
    lines = []
    for name, raw in series.items():
        pts = downsample(raw)
        lines.append(Series(name, [t - t0 for t, _ in pts], [w for _, w in pts]))
    bands = [Band(a - t0, b - t0, label) for a, b, label in windows]
    return line_chart(
        title, lines, x_label="seconds since first sample", y_label="W", bands=bands, empty=empty
    )


def gpu_power_charts(
    per_gpu: Mapping[str, Mapping[int, Points]], windows: Sequence[Window], t0: float
) -> list[str]:
    """Per-GPU lines: one chart per node (several nodes) and per group of `MAX_LINES` GPUs."""
    if not per_gpu:
        return [power_chart("GPU power per GPU", {}, windows, t0, "no GPU power samples")]
    charts = []
    for host, gpus in per_gpu.items():
        indices = list(gpus)
        groups = [indices[i : i + MAX_LINES] for i in range(0, len(indices), MAX_LINES)]
        for group in groups:
            title = f"GPU power per GPU, node {host}"
            if len(groups) > 1:
                title += f", GPUs {group[0]}–{group[-1]}"
            series = {f"{host}/{g}": gpus[g] for g in group}
            charts.append(power_chart(title, series, windows, t0, "no GPU power samples"))
    return charts


def _why(codes: Sequence[str]) -> str:
    return "".join(
        f"<li>{escape(explain(c))} <code>{escape(c)}</code></li>" for c in dict.fromkeys(codes)
    )


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def verdict_html(
    manifest: Mapping[str, Any] | None,
    power: PowerSummaryView | None,
    energy: Mapping[int, RunEnergyView],
) -> str:
    """Whether the GPU power numbers may be quoted and, when not, why in plain words. Reads the
    power manifest; without one, the rollup's `power` (its `missing` says why there is none)."""
    windows: list[tuple[str, bool, list[str]]] = []
    clock: list[str] = []
    if manifest is not None:
        ok = manifest.get("publication_valid") is True
        status = manifest.get("status")
        codes = _strings(manifest.get("reason_codes"))
        for v in manifest.get("window_validations") or []:
            if isinstance(v, dict):
                label = f"{v.get('benchmark_type')} c={v.get('concurrency')}"
                windows.append(
                    (label, v.get("power_coverage_valid") is True, _strings(v.get("reason_codes")))
                )
        for f in manifest.get("clock_sync_failures") or []:
            if isinstance(f, dict) and isinstance(f.get("offset_seconds"), int | float):
                clock.append(
                    f"node {f.get('hostname')}: its clock is {f['offset_seconds']:+.3f} s from "
                    "the head node's"
                )
    elif power is not None:
        ok = power.publication_valid is True
        status = power.status
        codes = list(power.reason_codes)
        for c, e in energy.items():
            windows.append((f"c={c}", e.power_coverage_valid is True, list(e.reason_codes)))
    else:
        return '<p class="warn">GPU power: no manifest.json, numbers are not publishable.</p>'
    if ok:
        head = f"GPU power numbers are <b>publishable</b> (status {escape(str(status))})."
    else:
        head = f"GPU power numbers are <b>NOT publishable</b> (status {escape(str(status))})."
    why = _why(codes)
    if manifest is None and power is not None and power.missing:
        why = f"<li>GPU power was not captured: {escape(power.missing)}</li>" + why
    if status in ("starting", "running"):
        why += "<li>Power finalization did not run (the capture was never closed).</li>"
    if not ok and not why and not windows:
        why = "<li>No measurement window was expected, so there is nothing to publish.</li>"
    why += "".join(f"<li>{escape(c)}</li>" for c in clock)
    rows = "".join(
        f"<li>{escape(label)}: valid</li>"
        if valid
        else f"<li>{escape(label)}: not valid<ul>{_why(wcodes)}</ul></li>"
        for label, valid, wcodes in windows
    )
    cls = "ok" if ok else "warn"
    return (
        f'<div class="verdict {cls}"><p>{head}</p>'
        + (f"<p>{'Noted (not blocking):' if ok else 'Why:'}</p><ul>{why}</ul>" if why else "")
        + (f"<p>Per measurement window:</p><ul>{rows}</ul>" if rows else "")
        + "</div>"
    )
