"""Tiny inline-SVG charts (pure functions returning markup; no scripts, no network)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

__all__ = ["Band", "Series", "bar_chart", "line_chart", "nice_ticks"]

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf")
W, H = 720, 300
ML, MR, MT, MB = 64, 16, 28, 44


@dataclass(frozen=True)
class Series:
    name: str
    xs: Sequence[float]
    ys: Sequence[float]
    labels: Sequence[str] = field(default_factory=tuple)  # optional point labels


@dataclass(frozen=True)
class Band:
    x0: float
    x1: float
    label: str


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About `n` round tick values covering [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return [0.0]
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(1, n)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    ticks = [round(start, 10)]
    while ticks[-1] < hi - step * 1e-9 and len(ticks) < 50:
        ticks.append(round(start + len(ticks) * step, 10))
    return ticks


def _fmt(v: float) -> str:
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:g}M"
    if a >= 1e4:
        return f"{v / 1e3:g}k"
    return f"{v:.4g}"


def _frame(title: str, x_label: str, y_label: str, body: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" '
        f'height="{H}" role="img" aria-label="{escape(title)}">'
        f'<text x="{W / 2}" y="16" text-anchor="middle" class="t">{escape(title)}</text>'
        + "".join(body)
        + f'<text x="{ML + (W - ML - MR) / 2}" y="{H - 6}" text-anchor="middle" class="l">'
        f"{escape(x_label)}</text>"
        f'<text transform="translate(14 {MT + (H - MT - MB) / 2}) rotate(-90)" '
        f'text-anchor="middle" class="l">{escape(y_label)}</text></svg>'
    )


def _empty(title: str, why: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} 60" width="{W}" height="60">'
        f'<text x="{W / 2}" y="20" text-anchor="middle" class="t">{escape(title)}</text>'
        f'<text x="{W / 2}" y="44" text-anchor="middle" class="l">{escape(why)}</text></svg>'
    )


def line_chart(
    title: str,
    series: Sequence[Series],
    *,
    x_label: str,
    y_label: str,
    bands: Sequence[Band] = (),
    markers: bool = False,
    empty: str = "no data",
) -> str:
    pts = [(x, y) for s in series for x, y in zip(s.xs, s.ys, strict=True) if math.isfinite(y)]
    if not pts:
        return _empty(title, empty)
    xs = [p[0] for p in pts] + [b.x0 for b in bands] + [b.x1 for b in bands]
    ys = [p[1] for p in pts]
    pad = (max(xs) - min(xs)) * 0.06 if markers else 0.0  # room for point labels
    xt = nice_ticks(min(xs) - pad, max(xs) + pad)
    legend_rows = max(1, math.ceil(len(series) / 4))
    yt = nice_ticks(min(0.0, *ys), max(ys) * (1 + 0.12 * legend_rows))  # room for the legend
    x0, x1, y0, y1 = xt[0], xt[-1], yt[0], yt[-1]
    pw, ph = W - ML - MR, H - MT - MB

    def sx(x: float) -> float:
        return ML + (x - x0) / ((x1 - x0) or 1) * pw

    def sy(y: float) -> float:
        return MT + ph - (y - y0) / ((y1 - y0) or 1) * ph

    body: list[str] = []
    for b in bands:
        body.append(
            f'<rect x="{sx(b.x0):.1f}" y="{MT}" width="{max(1.0, sx(b.x1) - sx(b.x0)):.1f}" '
            f'height="{ph}" class="band"><title>{escape(b.label)}</title></rect>'
            # labelled at the bottom, clear of the legend at the top
            f'<text x="{sx(b.x0) + 2:.1f}" y="{MT + ph - 4}" class="bl">{escape(b.label)}</text>'
        )
    for t in yt:
        body.append(
            f'<line x1="{ML}" x2="{W - MR}" y1="{sy(t):.1f}" y2="{sy(t):.1f}" class="g"/>'
            f'<text x="{ML - 4}" y="{sy(t) + 4:.1f}" text-anchor="end" class="k">{_fmt(t)}</text>'
        )
    for t in xt:
        body.append(
            f'<text x="{sx(t):.1f}" y="{MT + ph + 14}" text-anchor="middle" class="k">'
            f"{_fmt(t)}</text>"
        )
    for i, s in enumerate(series):
        color = PALETTE[i % len(PALETTE)]
        coords = [
            f"{sx(x):.1f},{sy(y):.1f}" for x, y in zip(s.xs, s.ys, strict=True) if math.isfinite(y)
        ]
        if not coords:
            continue
        body.append(
            f'<polyline fill="none" stroke="{color}" stroke-width="1.5" '
            f'points="{" ".join(coords)}">'
            f"<title>{escape(s.name)}</title></polyline>"
        )
        if markers:
            for j, (x, y) in enumerate(zip(s.xs, s.ys, strict=True)):
                tip = s.labels[j] if j < len(s.labels) else f"{_fmt(x)}, {_fmt(y)}"
                body.append(
                    f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3.5" fill="{color}">'
                    f"<title>{escape(tip)}</title></circle>"
                )
                if j < len(s.labels):
                    body.append(
                        f'<text x="{sx(x) + 5:.1f}" y="{sy(y) - 5:.1f}" class="k">'
                        f"{escape(s.labels[j])}</text>"
                    )
        body.append(
            f'<rect x="{ML + 8 + 150 * (i % 4)}" y="{MT + 4 + 14 * (i // 4)}" width="10" '
            f'height="10" fill="{color}"/><text x="{ML + 22 + 150 * (i % 4)}" '
            f'y="{MT + 13 + 14 * (i // 4)}" class="k">{escape(s.name[:22])}</text>'
        )
    body.append(f'<rect x="{ML}" y="{MT}" width="{pw}" height="{ph}" class="ax"/>')
    return _frame(title, x_label, y_label, body)


def bar_chart(
    title: str,
    categories: Sequence[str],
    groups: Sequence[tuple[str, Sequence[float | None]]],
    *,
    x_label: str,
    y_label: str,
    empty: str = "no data",
) -> str:
    vals = [v for _, vs in groups for v in vs if v is not None and math.isfinite(v)]
    if not categories or not vals:
        return _empty(title, empty)
    yt = nice_ticks(min(0.0, *vals), max(vals) * 1.12)  # headroom for the legend
    y0, y1 = yt[0], yt[-1]
    pw, ph = W - ML - MR, H - MT - MB

    def sy(y: float) -> float:
        return MT + ph - (y - y0) / ((y1 - y0) or 1) * ph

    body: list[str] = []
    for t in yt:
        body.append(
            f'<line x1="{ML}" x2="{W - MR}" y1="{sy(t):.1f}" y2="{sy(t):.1f}" class="g"/>'
            f'<text x="{ML - 4}" y="{sy(t) + 4:.1f}" text-anchor="end" class="k">{_fmt(t)}</text>'
        )
    slot = pw / len(categories)
    bw = slot * 0.8 / max(1, len(groups))
    for ci, cat in enumerate(categories):
        body.append(
            f'<text x="{ML + slot * (ci + 0.5):.1f}" y="{MT + ph + 14}" text-anchor="middle" '
            f'class="k">{escape(cat)}</text>'
        )
        for gi, (name, vs) in enumerate(groups):
            v = vs[ci] if ci < len(vs) else None
            if v is None or not math.isfinite(v):
                continue
            x = ML + slot * ci + slot * 0.1 + bw * gi
            top, base = sy(max(v, 0.0)), sy(min(v, 0.0))
            body.append(
                f'<rect x="{x:.1f}" y="{top:.1f}" width="{bw:.1f}" '
                f'height="{max(0.5, base - top):.1f}" '
                f'fill="{PALETTE[gi % len(PALETTE)]}"><title>{escape(name)} @ {escape(cat)}: '
                f"{_fmt(v)}</title></rect>"
            )
    for gi, (name, _) in enumerate(groups):
        body.append(
            f'<rect x="{ML + 8 + 150 * gi}" y="{MT + 4}" width="10" height="10" '
            f'fill="{PALETTE[gi % len(PALETTE)]}"/><text x="{ML + 22 + 150 * gi}" y="{MT + 13}" '
            f'class="k">{escape(name)}</text>'
        )
    body.append(f'<rect x="{ML}" y="{MT}" width="{pw}" height="{ph}" class="ax"/>')
    return _frame(title, x_label, y_label, body)
