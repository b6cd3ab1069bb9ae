"""The terminal form of a comparison (pure): what differed, then one aligned table per
concurrency and run, then what was excluded or missing."""

from __future__ import annotations

import math
from collections.abc import Sequence

from srt_cli.compare.model import Comparison, KpiDelta, WindowDelta

__all__ = ["build_row", "render_number", "render_text"]


def render_number(v: float | None) -> str:
    if v is None or not math.isfinite(v):
        return "-"
    a = abs(v)
    if a >= 100:
        return f"{v:,.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def _signed(v: float, unit: str) -> str:
    text = render_number(abs(v))
    return f"{'+' if v >= 0 else '-'}{text}{unit}"


def build_row(d: KpiDelta) -> list[str]:
    delta = "-" if d.delta is None else _signed(d.delta, "")
    pct = "" if d.delta_pct is None else f"{d.delta_pct:+.1f}%"
    if d.ci_low_pct is not None and d.ci_high_pct is not None:
        ci = f"[{d.ci_low_pct:+.1f}%, {d.ci_high_pct:+.1f}%]"
    elif d.ci_low is not None and d.ci_high is not None:
        ci = f"[{render_number(d.ci_low)}, {render_number(d.ci_high)}]"
    else:
        ci = "n/a"
    if d.significant is None:
        note = ""
    elif not d.significant:
        note = "within noise"
    else:
        improved = (d.delta or 0) > 0 if d.better == "higher" else (d.delta or 0) < 0
        note = "better" if improved else "worse"
    return [
        f"{d.label} ({d.unit})",
        render_number(d.baseline),
        render_number(d.value),
        delta,
        pct,
        ci,
        note,
    ]


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "  ") -> str:
    """Columns padded to their widest cell; numbers (all but the first and last column) are
    right-aligned so that digits line up."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    last = len(header) - 1

    def line(cells: Sequence[str]) -> str:
        padded = [
            c.ljust(widths[i]) if i in (0, last) else c.rjust(widths[i])
            for i, c in enumerate(cells)
        ]
        return (indent + "  ".join(padded)).rstrip()

    return "\n".join([line(header), line(["-" * w for w in widths]), *map(line, rows)])


def _window(w: WindowDelta) -> str:
    reqs = f"{w.baseline_requests if w.baseline_requests is not None else '?'} vs "
    reqs += f"{w.requests if w.requests is not None else '?'} requests"
    source = "" if w.source == "records" else ", rollup numbers: no per-request records, no CI"
    head = f"concurrency {w.concurrency}: {w.run} vs {w.baseline} ({reqs}{source})"
    header = ("KPI", w.baseline, w.run, "delta", "delta %", "95% CI of delta", "verdict")
    return head + "\n" + _table(header, [build_row(d) for d in w.kpis])


def render_text(c: Comparison) -> str:
    lines = [f"baseline: {c.baseline} ({c.runs[0].path})"]
    for run in c.runs[1:]:
        lines.append(f"{run.label} ({run.path}):")
        lines.append(f"  recipe:   {run.verdict}")
        drift = "; ".join(run.version_drift) if run.version_drift else "same versions"
        lines.append(f"  versions: {drift}")
    lines.append("")
    if not c.windows:
        lines.append("no concurrency is valid in the baseline and another run: no deltas")
    for w in c.windows:
        lines.append(_window(w))
        lines.append("")
    for e in c.excluded:
        lines.append(
            f"excluded: {e.run} concurrency {e.concurrency}: invalid ({', '.join(e.reasons)})"
        )
    for m in c.missing:
        lines.append(f"missing: {m['run']}: {m['why']} ({m['path']})")
    lines.append(
        f"95% CI: percentile bootstrap over requests, {c.resamples} resamples, seed {c.seed}; "
        '"within noise" = the interval contains 0'
    )
    return "\n".join(lines).rstrip() + "\n"
