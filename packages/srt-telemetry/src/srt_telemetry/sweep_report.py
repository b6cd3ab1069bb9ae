"""The sweep report (`srt-telemetry sweep-report SWEEP_DIR`, also `srtctl report SWEEP_DIR`).

One self-contained HTML file, `<SWEEP_DIR>/sweep-report.html`: inline SVG and CSS only, no
scripts, no network, byte-identical for the same inputs. Sections: the Pareto frontier across all
points and runs (output tok/s per GPU against tok/s per user), throughput-latency curves per
configuration, the validity table (every point and concurrency, with reason codes), and a link to
each run's dashboard. Inputs: `sweep_view.read_sweep_jobs` (docs/compare.md#sweep-report).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from html import escape
from pathlib import Path

from srt_telemetry.pareto import ParetoPoint, pareto_frontier, pareto_svg
from srt_telemetry.svg import TARGET_CSS, Series, line_chart
from srt_telemetry.sweep_view import JobView, read_sweep_jobs
from srt_telemetry.targets import metric_x_lines, per_user_lines

__all__ = ["REPORT_FILE", "build_points", "render_sweep_report", "write_sweep_report"]

REPORT_FILE = "sweep-report.html"

_CSS = (
    "body{font:14px system-ui,sans-serif;margin:24px;color:#222;max-width:1360px}"
    "table{border-collapse:collapse;margin:8px 0}"
    "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}td.n{text-align:right}"
    ".t{font:bold 13px sans-serif}.l{font:12px sans-serif;fill:#444}"
    ".k{font:10px sans-serif;fill:#555}.g{stroke:#eee}.ax{fill:none;stroke:#999}"
    ".ok{color:#1b5e20}.bad{color:#b71c1c}text.bad{fill:#b71c1c}.muted{color:#777}svg{max-width:100%;height:auto}"
    ".charts{display:flex;flex-wrap:wrap;gap:12px}"
)


def _num(v: float | None, digits: int = 1) -> str:
    return "-" if v is None or not math.isfinite(v) else f"{v:,.{digits}f}"


def build_points(jobs: Sequence[JobView]) -> list[ParetoPoint]:
    """Every run with both rates, one series per configuration."""
    points = []
    for job in jobs:
        for r in job.runs:
            x, y = r.tok_s_per_user, r.tok_s_per_gpu
            if x is None or y is None:
                continue
            label = f"{job.job_id} c={r.concurrency}"
            points.append(
                ParetoPoint(
                    x,
                    y,
                    job.configuration,
                    label,
                    r.valid,
                    tag=f"c={r.concurrency}",
                    reason=r.reasons,
                )
            )
    return points


def _curves(jobs: Sequence[JobView], metric: str) -> list[Series]:
    """One curve per configuration; an invalid run is a hollow point labelled with its reason,
    left out of the line."""
    by_config: dict[str, list[tuple[int, float, float, str]]] = {}
    for job in jobs:
        for r in job.runs:
            lat = r.ttft_p50_ms if metric == "ttft" else r.e2el_mean_ms
            thr = r.tok_s_per_gpu if r.tok_s_per_gpu is not None else r.output_tok_s
            if lat is None or thr is None:
                continue
            why = "" if r.valid else (r.reasons or "invalid")
            by_config.setdefault(job.configuration, []).append((r.concurrency, lat, thr, why))
    series = []
    for name, rows in by_config.items():
        rows.sort()
        series.append(
            Series(
                name=name,
                xs=[lat for _, lat, _, _ in rows],
                ys=[thr for _, _, thr, _ in rows],
                labels=[f"c={c}" for c, _, _, _ in rows],
                invalid=[why for *_, why in rows],
            )
        )
    return series


def _validity_table(jobs: Sequence[JobView], base: Path) -> str:
    rows = []
    for job in jobs:
        link = "-"
        if job.dashboard is not None:
            href = os.path.relpath(job.dashboard, base)
            link = f'<a href="{escape(href)}">dashboard</a>'
        head = (
            f"<td>{escape(job.job_id)}</td><td>{escape(job.configuration)}</td>"
            f"<td>{escape(job.job_name)}</td>"
        )
        if job.missing is not None or not job.runs:
            why = job.missing or "the rollup has no runs"
            rows.append(
                f'<tr class="missing">{head}<td>-</td><td class="bad">missing</td>'
                f"<td>{escape(why)}</td><td class=n>-</td><td>{link}</td></tr>"
            )
            continue
        for r in job.runs:
            verdict = (
                '<td class="ok">valid</td>' if r.valid else '<td class="bad verdict">invalid</td>'
            )
            rows.append(
                f"<tr>{head}<td class=n>{r.concurrency}</td>{verdict}"
                f"<td>{escape(r.reasons) or '-'}</td><td class=n>{_num(r.tok_s_per_gpu)}</td>"
                f"<td>{link}</td></tr>"
            )
    return (
        '<table class="validity"><tr><th>job</th><th>configuration</th><th>job name</th>'
        "<th>concurrency</th><th>verdict</th><th>reasons</th><th>tok/s per GPU</th>"
        f"<th>run</th></tr>{''.join(rows)}</table>"
    )


def _frontier_table(points: Sequence[ParetoPoint]) -> str:
    frontier = pareto_frontier(points)
    if not frontier:
        return '<p class="muted">No valid point has both rates: no frontier.</p>'
    rows = "".join(
        f"<tr><td>{escape(p.series)}</td><td>{escape(p.label)}</td><td class=n>{_num(p.x)}</td>"
        f"<td class=n>{_num(p.y)}</td></tr>"
        for p in frontier
    )
    return (
        '<table class="frontier"><tr><th>configuration</th><th>run</th><th>tok/s per user</th>'
        f"<th>tok/s per GPU</th></tr>{rows}</table>"
    )


def render_sweep_report(title: str, jobs: Sequence[JobView], *, base: Path) -> str:
    """The page (pure); `base` is where the file goes, for the relative dashboard links."""
    points = build_points(jobs)
    invalid = sum(1 for j in jobs for r in j.runs if not r.valid)
    missing = sum(1 for j in jobs if j.missing is not None)
    runs = sum(len(j.runs) for j in jobs)
    summary = (
        f"{len(jobs)} jobs, {runs} runs ({invalid} invalid: drawn hollow and labelled with "
        f"their reason, never on the frontier or a curve's line), {missing} jobs without results."
    )
    targets = tuple(t for j in jobs for t in j.targets)
    curves = "".join(
        f'<div class="c">{chart}</div>'
        for chart in (
            line_chart(
                "Throughput against TTFT p50, per configuration",
                _curves(jobs, "ttft"),
                x_label="TTFT p50 (ms)",
                y_label="output tok/s per GPU",
                markers=True,
                empty="no run with TTFT and throughput",
                targets=metric_x_lines(targets, "ttft"),
            ),
            line_chart(
                "Throughput against mean E2E latency, per configuration",
                _curves(jobs, "e2el"),
                x_label="E2E latency mean (ms)",
                y_label="output tok/s per GPU",
                markers=True,
                empty="no run with E2E latency and throughput",
                targets=metric_x_lines(targets, "e2el"),
            ),
        )
    )
    pareto = pareto_svg(
        "All points and runs: the Pareto frontier", points, targets=per_user_lines(targets)
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_CSS}{TARGET_CSS}</style></head><body>"
        f"<h1>{escape(title)}</h1><p>{escape(summary)}</p>"
        '<h2 id="pareto">Pareto frontier</h2>'
        f'<div class="c">{pareto}</div>'
        f"{_frontier_table(points)}"
        f'<h2 id="curves">Throughput against latency</h2><div class="charts">{curves}</div>'
        f'<h2 id="validity">Validity and runs</h2>{_validity_table(jobs, base)}'
        "</body></html>\n"
    )


def write_sweep_report(sweep_dir: Path, out: Path | None = None) -> Path:
    """Read the sweep folder and write the page atomically; returns its path."""
    title, jobs = read_sweep_jobs(sweep_dir)
    target = out if out is not None else sweep_dir / REPORT_FILE
    html = render_sweep_report(title, jobs, base=target.parent.resolve())
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(html)
    tmp.replace(target)
    return target
