"""The parts of the per-run dashboard beyond the rollup and power: which job it is and how it
ended (dashboard_run.py), the per-request latency part (dashboard_results.py,
dashboard_latency.py) and the engine metrics (dashboard_engine.py); plus the page layout (charts
in a grid that gives two columns at 1400 px and on a laptop, one on a narrow window).

`read_extras(run_dir)` is the only I/O; the `*_html` functions are pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

from srt_telemetry.dashboard_engine import (
    EngineSeries,
    engine_charts,
    read_engine_series,
    window_scrapes_html,
)
from srt_telemetry.dashboard_latency import (
    distribution_charts,
    latency_table_html,
    per_gpu_vs_per_user_chart,
    percentile_charts,
)
from srt_telemetry.dashboard_power import Window
from srt_telemetry.dashboard_results import Phase, read_phases
from srt_telemetry.dashboard_run import RunInfo, failure_html, read_run_info, recipe_line
from srt_telemetry.targets import TargetView

__all__ = [
    "PAGE_CSS",
    "Extras",
    "engine_html",
    "grid",
    "header_html",
    "latency_html",
    "read_extras",
    "result_windows",
]

PAGE_CSS = (
    ".grid{display:flex;flex-wrap:wrap;gap:8px 16px}"
    ".grid .c{flex:1 1 560px;max-width:720px;min-width:0}"
    ".grid svg{display:block;width:100%;height:auto}"
    ".tw{max-width:100%;overflow-x:auto}"
    "table{font-size:13px;margin:4px 0}th{background:#f5f5f5}"
    "th[scope=row]{text-align:right}"
    ".recipe{color:#444;margin:-8px 0 12px}"
    ".failed{border:2px solid #b71c1c;background:#fff5f5;padding:4px 16px;margin:12px 0}"
    ".failed h2{color:#b71c1c;margin:8px 0}.failed .reason{font-weight:600}"
    ".failed pre{background:#fff;border:1px solid #e0c0c0;padding:6px;overflow-x:auto;"
    "white-space:pre-wrap;font-size:12px}"
    ".kv th{text-align:left}.kv td{text-align:left}"
    ".cap{font-size:11px;color:#666;margin:0 0 0 64px}"
)


@dataclass
class Extras:
    info: RunInfo = field(default_factory=RunInfo)
    phases: list[Phase] = field(default_factory=list)
    engine: EngineSeries = field(default_factory=EngineSeries)
    notes: list[str] = field(default_factory=list)


def read_extras(run_dir: Path) -> Extras:
    info = read_run_info(run_dir)
    phases, notes = read_phases(run_dir)
    engine = read_engine_series(run_dir)
    return Extras(info, phases, engine, [*info.notes, *notes, *engine.notes])


def result_windows(phases: Sequence[Phase]) -> list[Window]:
    return [(p.start, p.end, p.label) for p in phases if p.start is not None and p.end is not None]


def grid(charts: Sequence[str]) -> str:
    return '<div class="grid">' + "".join(f'<div class="c">{c}</div>' for c in charts) + "</div>"


def header_html(extras: Extras) -> str:
    """The recipe line under the title, then the diagnosis when the run did not succeed."""
    first = extras.phases[0] if extras.phases else None
    line = recipe_line(
        extras.info,
        isl=first.isl if first is not None else None,
        osl=first.osl if first is not None else None,
    )
    recipe = f'<p class="recipe" id="recipe">{escape(line)}</p>' if line else ""
    return recipe + failure_html(extras.info)


def latency_html(
    extras: Extras, lead: Sequence[str] = (), targets: Sequence[TargetView] = ()
) -> str:
    """The percentile table, then the `lead` charts (the rollup's), tok/s per GPU vs per user,
    the p50/p90/p99 bars and the distributions (no chart of ours without result files); the
    run's declared latency `targets` are dashed lines on the charts they fit (`targets.py`)."""
    phases = extras.phases
    table = latency_table_html(phases)
    if not phases:
        return f'<h2 id="latency-h">Latency percentiles</h2>{table}{grid(lead)}'
    charts = [
        *lead,
        per_gpu_vs_per_user_chart(phases, targets),
        *percentile_charts(phases, targets),
    ]
    return (
        f'<h2 id="latency-h">Latency percentiles</h2>{table}{grid(charts)}'
        f'<h2 id="distributions">Latency distributions</h2>{grid(distribution_charts(phases))}'
    )


def engine_html(extras: Extras) -> str:
    engine = extras.engine
    windows = result_windows(extras.phases)
    charts = engine_charts(engine, windows)
    if not charts:
        return ""
    return (
        '<h2 id="engine">Engine metrics</h2>'
        f"<p>From {escape(engine.source)}; the measurement windows are shaded.</p>"
        f"{window_scrapes_html(engine, windows)}{grid(charts)}"
    )
