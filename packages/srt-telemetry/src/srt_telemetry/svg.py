"""Tiny inline-SVG charts (pure functions returning markup; no scripts, no network).

Readable at any width the page gives them (the `viewBox` scales) and free of overlapping text:
the legend sits above the plot, outside it; x tick and category labels are thinned to every k-th
when they would not fit side by side; point labels and window labels are placed greedily and
left out (the point or band keeps its tooltip) when every candidate spot collides with text
already placed. Text widths are estimated from the character count (`text_width`), slightly
generously, so an estimate that fits also fits in the browser; tests/test_browser_pages.py
checks the real boxes in Chromium.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html import escape

from srt_telemetry.targets import TargetLine

__all__ = [
    "TARGET_CSS",
    "Band",
    "Series",
    "bar_chart",
    "line_chart",
    "nice_ticks",
    "place_label",
    "target_marks",
    "text_width",
]

#: The look of a target line and its label (every page that draws one includes it).
TARGET_CSS = (
    ".target{stroke:#6a1b9a;stroke-width:1.5;stroke-dasharray:2 3}"
    ".tl{font:10px sans-serif;fill:#6a1b9a}"
)

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf")
W, H = 720, 300
ML, MR, MT, MB = 64, 16, 28, 44
#: Legend entries per row and the room one entry gets (swatch, gap, name).
LEGEND_COLUMNS = 4
LEGEND_STRIDE = 160
LEGEND_ROW = 14
LEGEND_NAME_CHARS = 24
#: Characters of a title that fit the chart's width (bold 13 px); a longer one is cut with "…"
#: (the whole title stays in the chart's aria-label and tooltip).
TITLE_CHARS = 92

Box = tuple[float, float, float, float]  # x0, y0, x1, y1


@dataclass(frozen=True)
class Series:
    name: str
    xs: Sequence[float]
    ys: Sequence[float]
    labels: Sequence[str] = field(default_factory=tuple)  # optional point labels
    #: Per point, why it is invalid ("" or missing: valid). With markers, an invalid point is
    #: drawn hollow, left out of the line, and labelled "<label> invalid: <reason>".
    invalid: Sequence[str] = field(default_factory=tuple)

    def why_invalid(self, j: int) -> str:
        return self.invalid[j] if j < len(self.invalid) else ""


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


def text_width(text: str, size: float = 10.0) -> float:
    """A generous estimate of the rendered width of `text` in a sans-serif font of `size` px."""
    return len(text) * size * 0.64


def _fmt(v: float) -> str:
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:g}M"
    if a >= 1e4:
        return f"{v / 1e3:g}k"
    return f"{v:.4g}"


def _overlaps(a: Box, b: Box, pad: float = 1.0) -> bool:
    return a[0] < b[2] + pad and b[0] < a[2] + pad and a[1] < b[3] + pad and b[1] < a[3] + pad


def _every(labels: Sequence[str], spacing: float, size: float = 10.0) -> int:
    """Show every k-th of evenly spaced labels so that neighbours never touch."""
    widest = max((text_width(t, size) for t in labels), default=0.0)
    if spacing <= 0:
        return 1
    return max(1, math.ceil((widest + 6) / spacing))


def _short(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _legend(names: Sequence[str], top: float, columns: int = LEGEND_COLUMNS) -> list[str]:
    """Entries in `columns` columns; fewer columns give each name more room (2 columns: 48
    characters, for names like a compare run's settings)."""
    stride = LEGEND_STRIDE * LEGEND_COLUMNS / columns
    chars = LEGEND_NAME_CHARS * LEGEND_COLUMNS // columns
    out = []
    for i, name in enumerate(names):
        x = ML + 8 + stride * (i % columns)
        y = top + LEGEND_ROW * (i // columns)
        out.append(
            f'<rect x="{x:g}" y="{y}" width="10" height="10" fill="{PALETTE[i % len(PALETTE)]}"/>'
            f'<text x="{x + 14:g}" y="{y + 9}" class="k">'
            f"{escape(_short(name, chars))}<title>{escape(name)}</title></text>"
        )
    return out


def _legend_rows(n: int, columns: int = LEGEND_COLUMNS) -> int:
    return math.ceil(n / columns) if n else 0


def _frame(title: str, x_label: str, y_label: str, body: list[str], *, top: float, h: float) -> str:
    shown = _short(title, TITLE_CHARS)
    tip = f"<title>{escape(title)}</title>" if shown != title else ""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {h}" width="{W}" '
        f'height="{h}" role="img" aria-label="{escape(title)}">'
        f'<text x="{W / 2}" y="16" text-anchor="middle" class="t">{escape(shown)}{tip}</text>'
        + "".join(body)
        + f'<text x="{ML + (W - ML - MR) / 2}" y="{h - 6}" text-anchor="middle" class="l">'
        f"{escape(x_label)}</text>"
        f'<text transform="translate(14 {top + (H - MT - MB) / 2}) rotate(-90)" '
        f'text-anchor="middle" class="l">{escape(y_label)}</text></svg>'
    )


def _empty(title: str, why: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} 60" width="{W}" height="60">'
        f'<text x="{W / 2}" y="20" text-anchor="middle" class="t">{escape(title)}</text>'
        f'<text x="{W / 2}" y="44" text-anchor="middle" class="l">{escape(why)}</text></svg>'
    )


def _y_axis(yt: Sequence[float], sy: Callable[[float], float]) -> list[str]:
    return [
        f'<line x1="{ML}" x2="{W - MR}" y1="{sy(t):.1f}" y2="{sy(t):.1f}" class="g"/>'
        f'<text x="{ML - 4}" y="{sy(t) + 3.5:.1f}" text-anchor="end" class="k">{_fmt(t)}</text>'
        for t in yt
    ]


def target_marks(
    lines: Sequence[TargetLine],
    *,
    sx: Callable[[float], float],
    sy: Callable[[float], float],
    plot: Box,
    placed: list[Box],
) -> list[str]:
    """Each target as a dashed line across the plot (`plot`: x0, y0, x1, y1) with its label
    inside the plot: a vertical line's at the top beside it (stacked when several), a horizontal
    line's at the right above it. Labels go into `placed`, so point labels avoid them."""
    out: list[str] = []
    stacked = 0
    for t in lines:
        w = text_width(t.label)
        if t.axis == "x":
            x = sx(t.value)
            out.append(
                f'<line class="target" x1="{x:.1f}" x2="{x:.1f}" y1="{plot[1]}" y2="{plot[3]}">'
                f"<title>{escape(t.label)}</title></line>"
            )
            base = plot[1] + 12 + 12 * stacked
            stacked += 1
            left = x + 3 if x + 3 + w <= plot[2] - 2 else x - 3 - w
        else:
            y = sy(t.value)
            out.append(
                f'<line class="target" x1="{plot[0]}" x2="{plot[2]}" y1="{y:.1f}" y2="{y:.1f}">'
                f"<title>{escape(t.label)}</title></line>"
            )
            base = y - 3 if y - 13 >= plot[1] else y + 12
            left = plot[2] - 3 - w
        placed.append((left, base - 10, left + w, base))
        out.append(f'<text x="{left:.1f}" y="{base:.1f}" class="tl">{escape(t.label)}</text>')
    return out


def place_label(
    text: str, x: float, y: float, placed: list[Box], area: Box, *, size: float = 10.0
) -> tuple[float, float] | None:
    """The first spot around (x, y) where `text` fits inside `area` without touching `placed`."""
    w, h = text_width(text, size), size
    for dx, dy in (
        (5, -5),
        (5, 5 + h),
        (-5 - w, -5),
        (-5 - w, 5 + h),
        (-w / 2, -8),
        (-w / 2, 8 + h),
    ):
        box = (x + dx, y + dy - h, x + dx + w, y + dy)
        inside = box[0] >= area[0] and box[2] <= area[2] and box[1] >= area[1] and box[3] <= area[3]
        if inside and not any(_overlaps(box, p) for p in placed):
            placed.append(box)
            return x + dx, y + dy
    return None


def line_chart(
    title: str,
    series: Sequence[Series],
    *,
    x_label: str,
    y_label: str,
    bands: Sequence[Band] = (),
    markers: bool = False,
    empty: str = "no data",
    targets: Sequence[TargetLine] = (),
    legend_columns: int = LEGEND_COLUMNS,
) -> str:
    pts = [(x, y) for s in series for x, y in zip(s.xs, s.ys, strict=True) if math.isfinite(y)]
    if not pts:
        return _empty(title, empty)
    xs = [p[0] for p in pts] + [b.x0 for b in bands] + [b.x1 for b in bands]
    xs += [t.value for t in targets if t.axis == "x"]
    ys = [p[1] for p in pts] + [t.value for t in targets if t.axis == "y"]
    pad = (max(xs) - min(xs)) * 0.06 if markers else 0.0  # room for point labels
    lo = min(xs) - pad if min(xs) < 0 else max(0.0, min(xs) - pad)  # no negative axis for >= 0
    xt = nice_ticks(lo, max(xs) + pad)
    yt = nice_ticks(min(0.0, *ys), max(ys) * (1.08 if markers else 1.0))
    x0, x1, y0, y1 = xt[0], xt[-1], yt[0], yt[-1]
    rows = _legend_rows(len(series), legend_columns)
    top = MT + LEGEND_ROW * rows  # the legend sits between the title and the plot
    h = H + LEGEND_ROW * rows
    pw, ph = W - ML - MR, H - MT - MB

    def sx(x: float) -> float:
        return ML + (x - x0) / ((x1 - x0) or 1) * pw

    def sy(y: float) -> float:
        return top + ph - (y - y0) / ((y1 - y0) or 1) * ph

    body: list[str] = []
    placed: list[Box] = []  # text already inside the plot
    rows_end = [-math.inf, -math.inf]  # right end of the last window label on each row
    for b in bands:
        left, right = sx(b.x0), sx(b.x1)
        body.append(
            f'<rect x="{left:.1f}" y="{top}" width="{max(1.0, right - left):.1f}" '
            f'height="{ph}" class="band"><title>{escape(b.label)}</title></rect>'
        )
        # labelled at the bottom of the plot, on the first of two rows where it fits
        width = text_width(b.label, 9)
        for row, end in enumerate(rows_end):
            if left + 2 >= end + 3 and left + 2 + width <= W - MR:
                base = top + ph - 4 - 11 * row
                body.append(
                    f'<text x="{left + 2:.1f}" y="{base}" class="bl">{escape(b.label)}</text>'
                )
                rows_end[row] = left + 2 + width
                placed.append((left + 2, base - 9, left + 2 + width, base))
                break
    body += _y_axis(yt, sy)
    every = _every([_fmt(t) for t in xt], pw / max(1, len(xt) - 1))
    for i, t in enumerate(xt):
        if i % every == 0:
            body.append(
                f'<text x="{sx(t):.1f}" y="{top + ph + 17}" text-anchor="middle" class="k">'
                f"{_fmt(t)}</text>"
            )
    area: Box = (ML + 2, top + 2, W - MR - 2, top + ph - 2)
    body += target_marks(targets, sx=sx, sy=sy, plot=(ML, top, W - MR, top + ph), placed=placed)
    for i, s in enumerate(series):
        color = PALETTE[i % len(PALETTE)]
        coords = [
            f"{sx(x):.1f},{sy(y):.1f}"
            for j, (x, y) in enumerate(zip(s.xs, s.ys, strict=True))
            if math.isfinite(y) and not (markers and s.why_invalid(j))
        ]
        if coords:
            body.append(
                f'<polyline fill="none" stroke="{color}" stroke-width="1.5" '
                f'points="{" ".join(coords)}">'
                f"<title>{escape(s.name)}</title></polyline>"
            )
        if markers:
            for j, (x, y) in enumerate(zip(s.xs, s.ys, strict=True)):
                if not math.isfinite(y):
                    continue
                why = s.why_invalid(j)
                name = s.labels[j] if j < len(s.labels) else ""
                label = f"{name} invalid: {why}".strip() if why else name
                tip = label or f"{_fmt(x)}, {_fmt(y)}"
                look = (
                    f'class="mk invalid" fill="white" stroke="{color}" stroke-width="1.5"'
                    if why
                    else f'class="mk valid" fill="{color}"'
                )
                body.append(
                    f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3.5" {look}>'
                    f"<title>{escape(tip)}</title></circle>"
                )
                if label:
                    spot = place_label(label, sx(x), sy(y), placed, area)
                    if spot is not None:
                        cls = "k bad" if why else "k"
                        body.append(
                            f'<text x="{spot[0]:.1f}" y="{spot[1]:.1f}" class="{cls}">'
                            f"{escape(label)}</text>"
                        )
    body += _legend([s.name for s in series], MT - 4, legend_columns)
    body.append(f'<rect x="{ML}" y="{top}" width="{pw}" height="{ph}" class="ax"/>')
    return _frame(title, x_label, y_label, body, top=top, h=h)


def bar_chart(
    title: str,
    categories: Sequence[str],
    groups: Sequence[tuple[str, Sequence[float | None]]],
    *,
    x_label: str,
    y_label: str,
    empty: str = "no data",
    targets: Sequence[TargetLine] = (),
) -> str:
    vals = [v for _, vs in groups for v in vs if v is not None and math.isfinite(v)]
    if not categories or not vals:
        return _empty(title, empty)
    lines = [t for t in targets if t.axis == "y"]
    vals += [t.value for t in lines]
    yt = nice_ticks(min(0.0, *vals), max(vals) * 1.04)
    y0, y1 = yt[0], yt[-1]
    rows = _legend_rows(len(groups))
    top = MT + LEGEND_ROW * rows
    h = H + LEGEND_ROW * rows
    pw, ph = W - ML - MR, H - MT - MB

    def sy(y: float) -> float:
        return top + ph - (y - y0) / ((y1 - y0) or 1) * ph

    body = _y_axis(yt, sy)
    slot = pw / len(categories)
    bw = slot * 0.8 / max(1, len(groups))
    every = _every(categories, slot)
    for ci, cat in enumerate(categories):
        if ci % every == 0:
            body.append(
                f'<text x="{ML + slot * (ci + 0.5):.1f}" y="{top + ph + 17}" '
                f'text-anchor="middle" class="k">{escape(cat)}</text>'
            )
        for gi, (name, vs) in enumerate(groups):
            v = vs[ci] if ci < len(vs) else None
            if v is None or not math.isfinite(v):
                continue
            x = ML + slot * ci + slot * 0.1 + bw * gi
            bar_top, base = sy(max(v, 0.0)), sy(min(v, 0.0))
            body.append(
                f'<rect x="{x:.1f}" y="{bar_top:.1f}" width="{bw:.1f}" '
                f'height="{max(0.5, base - bar_top):.1f}" '
                f'fill="{PALETTE[gi % len(PALETTE)]}"><title>{escape(name)} @ {escape(cat)}: '
                f"{_fmt(v)}</title></rect>"
            )
    body += target_marks(lines, sx=lambda x: x, sy=sy, plot=(ML, top, W - MR, top + ph), placed=[])
    body += _legend([name for name, _ in groups], MT - 4)
    body.append(f'<rect x="{ML}" y="{top}" width="{pw}" height="{ph}" class="ax"/>')
    return _frame(title, x_label, y_label, body, top=top, h=h)
