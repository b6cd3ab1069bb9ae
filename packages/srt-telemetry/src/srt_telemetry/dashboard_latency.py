"""The dashboard's latency part (pure): the percentile table, output tok/s per GPU against tok/s
per user, p50/p90/p99 bars and the distribution of each latency per concurrency.

Everything comes from `dashboard_results.Phase` (the sa-bench result files). Without result
files the part is one sentence and no chart, and the page keeps the rollup's mean/p99 bars.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from srt_telemetry.dashboard_results import METRICS, STATS, Phase
from srt_telemetry.svg import Series, bar_chart, line_chart
from srt_telemetry.targets import TargetView, metric_lines, per_user_lines

__all__ = [
    "LABELS",
    "MAX_LINES",
    "distribution_charts",
    "latency_table_html",
    "per_gpu_vs_per_user_chart",
    "percentile_charts",
]

LABELS = {"ttft": "TTFT", "tpot": "TPOT", "itl": "ITL", "e2el": "E2EL"}
MAX_LINES = 8  # per distribution chart
#: What each number means (docs/telemetry-and-bench.md#metric-definitions), said on the page.
DEFINITIONS = {
    "per-chunk": (
        "ITL is per chunk (the vLLM/aiperf convention): the gap between consecutive arrivals "
        "carrying text; tokens that arrive together are one gap, not zero gaps."
    ),
}
TPOT_DEFINITION = (
    "TPOT is per token: (E2EL − TTFT) / (output tokens − 1) of each request. "
    "E2EL: send to end of stream; TTFT: send to the first chunk carrying text."
)


def definitions_html(phases: Sequence[Phase]) -> str:
    """One line saying which definition the ITL and TPOT figures use."""
    kinds = sorted({p.itl_definition or "" for p in phases})
    itl = " ".join(
        DEFINITIONS.get(k, f"ITL definition {k!r} (not described here).")
        if k
        else "ITL: the result file does not say how it was computed (older srt-bench)."
        for k in kinds
    )
    return f'<p id="metric-definitions" class="note">{escape(itl)} {escape(TPOT_DEFINITION)}</p>'


def _num(v: float | int | None, digits: int = 1) -> str:
    if v is None or isinstance(v, bool) or not math.isfinite(v):
        return "–"
    return f"{v:,.{digits}f}"


def _digits(metric: str) -> int:
    return 2 if metric in ("tpot", "itl") else 1


def _header(metric: str, phases: Sequence[Phase]) -> str:
    if metric == "itl" and phases and all(p.itl_definition == "per-chunk" for p in phases):
        return "ITL per chunk"
    if metric == "tpot":
        return "TPOT per token"
    return LABELS[metric]


def latency_table_html(phases: Sequence[Phase]) -> str:
    """Per concurrency: requests, tok/s per GPU and per user, p50/p90/p99 of every latency."""
    if not phases:
        return (
            '<p id="latency-missing">No per-request results (<code>results_concurrency_*.json'
            "</code>): no percentiles, distributions or tok/s per GPU.</p>"
        )
    groups = "".join(f'<th colspan="{len(STATS)}">{_header(m, phases)} (ms)</th>' for m in METRICS)
    head = (
        '<tr><th rowspan="2">concurrency</th><th rowspan="2">ok / failed</th>'
        '<th rowspan="2">tok/s per GPU</th><th rowspan="2">tok/s per user</th>'
        f"{groups}</tr><tr>" + "".join(f"<th>{s}</th>" for _ in METRICS for s in STATS) + "</tr>"
    )
    body = ""
    for p in phases:
        ok = f"{_num(p.completed, 0)} / {_num(p.failed, 0)}"
        cells = "".join(
            f"<td>{_num(p.stats[m][s], _digits(m))}</td>" for m in METRICS for s in STATS
        )
        body += (
            f'<tr><th scope="row" title="{escape(p.source)}">{escape(p.label)}</th>'
            f"<td>{ok}</td><td>{_num(p.tok_s_per_gpu)}</td><td>{_num(p.tok_s_per_user)}</td>"
            f"{cells}</tr>"
        )
    table = f'<div class="tw"><table id="latency">{head}{body}</table></div>'
    return table + definitions_html(phases)


def per_gpu_vs_per_user_chart(phases: Sequence[Phase], targets: Sequence[TargetView] = ()) -> str:
    pts = [
        (p.tok_s_per_user, p.tok_s_per_gpu, p.label)
        for p in phases
        if p.tok_s_per_user is not None and p.tok_s_per_gpu is not None
    ]
    return line_chart(
        "Output tok/s per GPU vs tok/s per user (one point per concurrency)",
        [Series("per GPU", [x for x, _, _ in pts], [y for _, y, _ in pts], [c for *_, c in pts])]
        if pts
        else [],
        x_label="tok/s per user (1000 / mean TPOT)",
        y_label="output tok/s per GPU",
        markers=True,
        empty="no tok/s per GPU in the result files",
        targets=per_user_lines(targets),
    )


def percentile_charts(phases: Sequence[Phase], targets: Sequence[TargetView] = ()) -> list[str]:
    """p50/p90/p99 bars per concurrency for each metric, with that metric's declared targets as
    dashed lines (`targets.py`)."""
    cats = [p.label.removeprefix("c=") for p in phases]
    return [
        bar_chart(
            f"{LABELS[m]} p50 / p90 / p99 (ms)",
            cats,
            [(s, [p.stats[m][s] for p in phases]) for s in STATS],
            x_label="concurrency",
            y_label="ms",
            empty=f"no {LABELS[m]} in the result files",
            targets=metric_lines(targets, m),
        )
        for m in METRICS
    ]


def distribution_charts(phases: Sequence[Phase]) -> list[str]:
    """One chart per metric: the share of requests (y, %) at or below each latency (x, ms), one
    line per concurrency; more than `MAX_LINES` concurrencies get one chart per group."""
    charts = []
    groups = [phases[i : i + MAX_LINES] for i in range(0, len(phases), MAX_LINES)] or [[]]
    for m in METRICS:
        for gi, group in enumerate(groups):
            title = f"{LABELS[m]} distribution (share of requests at or below, to p99.9)"
            if len(groups) > 1:
                title += f", part {gi + 1} of {len(groups)}"
            series = [
                Series(
                    p.label, [ms for _, ms in p.quantiles[m]], [q * 100 for q, _ in p.quantiles[m]]
                )
                for p in group
                if p.quantiles.get(m)
            ]
            charts.append(
                line_chart(
                    title,
                    series,
                    x_label=f"{LABELS[m]} (ms)",
                    y_label="% of requests",
                    empty=f"no per-request {LABELS[m]} in the result files",
                )
            )
    return charts
