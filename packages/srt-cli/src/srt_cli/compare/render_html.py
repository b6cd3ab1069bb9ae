"""`srtctl compare --html FILE`: one self-contained page (inline SVG and CSS, no scripts, no
network): every run's windows on one Pareto chart (srt_telemetry.pareto, the chart the sweep
report draws), the runs' throughput-latency curves and latency distributions on the same axes
(overlays.py), what differed, and the delta tables. On the overlays a run is named by the
settings that differed ("engine.speedup_ratio=20"; its label when no setting did, or when two
runs would get the same name)."""

from __future__ import annotations

from html import escape

from srt_cli.compare.model import Comparison, WindowDelta
from srt_cli.compare.overlays import Distribution
from srt_cli.compare.render_text import build_row
from srt_telemetry.pareto import ParetoPoint, pareto_svg
from srt_telemetry.svg import TARGET_CSS, Series, line_chart
from srt_telemetry.targets import TargetView, per_user_lines

__all__ = ["render_html"]

_CSS = (
    "body{font:14px system-ui,sans-serif;margin:24px;color:#222;max-width:1360px}"
    "table{border-collapse:collapse;margin:6px 0 18px}"
    "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}td:first-child{text-align:left}"
    ".t{font:bold 13px sans-serif}.l{font:12px sans-serif;fill:#444}"
    ".k{font:10px sans-serif;fill:#555}.g{stroke:#eee}.ax{fill:none;stroke:#999}"
    "text.bad{fill:#b71c1c}"
    ".better{color:#1b5e20}.worse{color:#b71c1c}.noise{color:#777}svg{max-width:100%;height:auto}"
    ".charts{display:flex;flex-wrap:wrap;gap:8px 16px}.charts .c{flex:1 1 560px;max-width:720px}"
    ".charts svg{display:block;width:100%;height:auto}"
    ".band{fill:#ffd54f;opacity:.25}.bl{font:9px sans-serif;fill:#8a6d00}"
)


def overlay_names(c: Comparison) -> dict[str, str]:
    """run label -> its name on the overlays: its values of the settings that differed, unless
    it has none or two runs share them (then its legend, which starts with its label)."""
    names = {r.label: r.setting_values for r in c.runs}
    if not all(names.values()) or len(set(names.values())) < len(names):
        return {r.label: r.legend or r.label for r in c.runs}
    return names


def _curve_charts(c: Comparison, names: dict[str, str]) -> list[str]:
    charts = []
    for attr, title, axis in (
        ("ttft_p50_ms", "Throughput against TTFT p50, run against run", "TTFT p50 (ms)"),
        ("e2el_p50_ms", "Throughput against E2E latency p50, run against run", "E2EL p50 (ms)"),
    ):
        series = []
        for r in c.runs:
            rows = sorted(
                (p.concurrency, x, y, "" if p.valid else ", ".join(p.reasons) or "invalid")
                for p in c.points
                if p.run == r.label
                and (x := getattr(p, attr)) is not None
                and (y := p.tok_s_per_gpu) is not None
            )
            series.append(
                Series(
                    names[r.label],
                    [x for _, x, _, _ in rows],
                    [y for _, _, y, _ in rows],
                    labels=[f"c={cc}" for cc, *_ in rows],
                    invalid=[why for *_, why in rows],
                )
            )
        charts.append(
            line_chart(
                title,
                [s for s in series if s.xs],
                x_label=axis,
                y_label="output tok/s per GPU",
                markers=True,
                empty="no run with this latency and tok/s per GPU",
                legend_columns=2,
            )
        )
    return charts


def _distribution_charts(dists: list[Distribution], names: dict[str, str]) -> list[str]:
    return [
        line_chart(
            f"{d.label} distribution at c={d.concurrency}, run against run",
            [
                Series(names.get(run, run), [ms for _, ms in qs], [q * 100 for q, _ in qs])
                for run, qs in d.runs
            ],
            x_label=f"{d.label} (ms)",
            y_label="% of requests at or below",
            legend_columns=2,
        )
        for d in dists
    ]


def _grid(charts: list[str]) -> str:
    return '<div class="charts">' + "".join(f'<div class="c">{x}</div>' for x in charts) + "</div>"


def _table(w: WindowDelta) -> str:
    head = "".join(
        f"<th>{escape(h)}</th>"
        for h in ("KPI", w.baseline, w.run, "delta", "delta %", "95% CI of delta", "verdict")
    )
    rows = []
    for d in w.kpis:
        cells = build_row(d)
        cls = {"better": "better", "worse": "worse", "within noise": "noise"}.get(cells[-1], "")
        rows.append(
            f'<tr class="{cls}">' + "".join(f"<td>{escape(x)}</td>" for x in cells) + "</tr>"
        )
    caption = f"concurrency {w.concurrency}: {w.run} vs {w.baseline}"
    if w.source != "records":
        caption += " (rollup numbers: no per-request records, no CI)"
    return (
        f'<table class="deltas"><caption>{escape(caption)}</caption><tr>{head}</tr>'
        f"{''.join(rows)}</table>"
    )


def render_html(c: Comparison, distributions: list[Distribution] | None = None) -> str:
    """The page (pure); `distributions` from `overlays.build_distributions` (none: no section)."""
    legend = {r.label: r.legend or r.label for r in c.runs}
    points = [
        ParetoPoint(
            x=p.tok_s_per_user,
            y=p.tok_s_per_gpu,
            series=legend.get(p.run, p.run),
            label=f"c={p.concurrency}",
            valid=p.valid,
            tag=f"c={p.concurrency}",
            reason=", ".join(p.reasons),
        )
        for p in c.points
        if p.tok_s_per_user is not None and p.tok_s_per_gpu is not None
    ]
    runs = "".join(
        f"<li><b>{escape(r.label)}</b> <code>{escape(r.path)}</code>"
        + (f": {escape(r.verdict)}" if r.verdict else " (baseline)")
        + (
            f"<br>versions: {escape('; '.join(r.version_drift))}"
            if r.version_drift
            else ("<br>versions: same" if r.verdict else "")
        )
        + "</li>"
        for r in c.runs
    )
    excluded = "".join(
        f"<li>{escape(e.run)} concurrency {e.concurrency}: invalid ({escape(', '.join(e.reasons))})"
        "</li>"
        for e in c.excluded
    ) + "".join(f"<li>{escape(m['run'])}: {escape(m['why'])}</li>" for m in c.missing)
    targets = [
        TargetView(name=t.name, metric=t.metric, percentile=t.percentile, limit_ms=t.limit_ms)
        for t in c.targets
    ]
    pareto = pareto_svg(
        "Every run on one chart: the Pareto frontier", points, targets=per_user_lines(targets)
    )
    names = overlay_names(c)
    title = f"srtctl compare: {len(c.runs)} runs, baseline {c.baseline}"
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_CSS}{TARGET_CSS}</style></head><body>"
        f"<h1>{escape(title)}</h1>"
        f'<div class="c">{pareto}</div>'
        '<h2 id="curves">Throughput against latency, run against run</h2>'
        + _grid(_curve_charts(c, names))
        + (
            '<h2 id="distributions">Latency distributions, run against run</h2>'
            "<p>The share of each run's successful requests at or below each latency, up to "
            "p99.9 (ITL pooled over requests).</p>"
            + _grid(_distribution_charts(distributions, names))
            if distributions
            else ""
        )
        + f'<h2>What differed</h2><ul class="runs">{runs}</ul>'
        + (f'<h2>Excluded and missing</h2><ul class="excluded">{excluded}</ul>' if excluded else "")
        + "<h2>KPI deltas</h2>"
        + "".join(_table(w) for w in c.windows)
        + f"<p>95% CI: percentile bootstrap over requests, {c.resamples} resamples, seed "
        f"{c.seed}.</p></body></html>\n"
    )
