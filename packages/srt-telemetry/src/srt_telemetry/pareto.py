"""The Pareto frontier of benchmark points and its chart (pure; inline SVG, no scripts).

A point is (tok/s per user, output tok/s per GPU); both are "more is better". A point is on the
frontier when no other point is at least as good on both axes and better on one. Invalid points
are drawn hollow, labelled with their reason, and never make the frontier; every point is
labelled with its `tag` (its concurrency, `c=<n>`) where the label fits; declared latency targets
are dashed lines (`targets.py`). Used by the sweep report and by `srtctl compare --html`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from srt_telemetry.svg import PALETTE, nice_ticks, place_label, target_marks
from srt_telemetry.targets import TargetLine

__all__ = ["ParetoPoint", "pareto_frontier", "pareto_svg"]

W, H = 900, 440
ML, MR, MT, MB = 72, 24, 32, 56
#: Legend entries per row under the plot, and the characters a name keeps (a compare legend
#: names the settings that differed: "<job>: roles.agg.workers=4").
LEGEND_COLUMNS = 2
LEGEND_CHARS = 60


@dataclass(frozen=True)
class ParetoPoint:
    x: float
    y: float
    series: str
    label: str
    valid: bool = True
    #: The short label drawn next to the point (its concurrency, "c=16"); "" draws none.
    tag: str = ""
    #: Why it is invalid (the reason codes), drawn after the tag.
    reason: str = ""

    @property
    def shown(self) -> str:
        """The text next to the point: the tag, and for an invalid point its reason."""
        if self.valid:
            return self.tag
        return f"{self.tag} invalid: {self.reason or 'see the validity table'}".strip()


def pareto_frontier(points: Sequence[ParetoPoint]) -> list[ParetoPoint]:
    """The non-dominated valid points, by increasing x (so by decreasing y)."""
    ok = [p for p in points if p.valid and math.isfinite(p.x) and math.isfinite(p.y)]
    ok.sort(key=lambda p: (-p.x, -p.y, p.series, p.label))
    frontier: list[ParetoPoint] = []
    best_y = -math.inf
    for p in ok:
        if p.y > best_y:
            frontier.append(p)
            best_y = p.y
    frontier.reverse()
    return frontier


def _fmt(v: float) -> str:
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:.3g}M"
    if a >= 1e4:
        return f"{v / 1e3:.3g}k"
    return f"{v:.4g}"


def pareto_svg(
    title: str,
    points: Sequence[ParetoPoint],
    *,
    x_label: str = "output tok/s per user (1000 / TPOT p50)",
    y_label: str = "output tok/s per GPU",
    targets: Sequence[TargetLine] = (),
) -> str:
    """A scatter of every point, one colour per series, and the frontier as a line. The legend
    sits below the plot, so it never covers a point."""
    drawn = [p for p in points if math.isfinite(p.x) and math.isfinite(p.y)]
    series = list(dict.fromkeys(p.series for p in drawn))
    legend_rows = math.ceil(len(series) / LEGEND_COLUMNS) if series else 0
    height = H + 16 * legend_rows
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {height}" width="{W}" '
        f'height="{height}" role="img" class="pareto" aria-label="{escape(title)}">'
        f'<text x="{W / 2}" y="18" text-anchor="middle" class="t">{escape(title)}</text>'
    )
    if not drawn:
        return (
            head + f'<text x="{W / 2}" y="60" text-anchor="middle" class="l">no points with '
            "both rates (a run needs TPOT and a GPU count)</text></svg>"
        )
    xs = [p.x for p in drawn] + [t.value for t in targets if t.axis == "x"]
    ys = [p.y for p in drawn] + [t.value for t in targets if t.axis == "y"]
    xt = nice_ticks(0.0, max(xs) * 1.05)
    yt = nice_ticks(0.0, max(ys) * 1.05)
    pw, ph = W - ML - MR, H - MT - MB

    def sx(x: float) -> float:
        return ML + (x - xt[0]) / ((xt[-1] - xt[0]) or 1) * pw

    def sy(y: float) -> float:
        return MT + ph - (y - yt[0]) / ((yt[-1] - yt[0]) or 1) * ph

    body: list[str] = []
    for t in yt:
        body.append(
            f'<line x1="{ML}" x2="{W - MR}" y1="{sy(t):.1f}" y2="{sy(t):.1f}" class="g"/>'
            f'<text x="{ML - 4}" y="{sy(t) + 4:.1f}" text-anchor="end" class="k">{_fmt(t)}</text>'
        )
    for t in xt:
        body.append(
            f'<text x="{sx(t):.1f}" y="{MT + ph + 16}" text-anchor="middle" class="k">'
            f"{_fmt(t)}</text>"
        )
    frontier = pareto_frontier(drawn)
    if frontier:
        coords = " ".join(f"{sx(p.x):.1f},{sy(p.y):.1f}" for p in frontier)
        body.append(
            f'<polyline class="frontier" fill="none" stroke="#222" stroke-width="2" '
            f'stroke-dasharray="6 3" points="{coords}"><title>Pareto frontier '
            f"({len(frontier)} points)</title></polyline>"
        )
    on_frontier = {id(p) for p in frontier}
    placed: list[tuple[float, float, float, float]] = []
    area = (ML + 2, MT + 2, W - MR - 2, MT + ph - 2)
    body += target_marks(targets, sx=sx, sy=sy, plot=(ML, MT, W - MR, MT + ph), placed=placed)
    # invalid points first, so that their reasons get the first spots
    for p in sorted(drawn, key=lambda q: q.valid):
        if p.shown:
            spot = place_label(p.shown, sx(p.x), sy(p.y), placed, area)
            if spot is not None:
                cls = "k" if p.valid else "k bad"
                body.append(
                    f'<text x="{spot[0]:.1f}" y="{spot[1]:.1f}" class="{cls}">'
                    f"{escape(p.shown)}</text>"
                )
    for p in drawn:
        color = PALETTE[series.index(p.series) % len(PALETTE)]
        fill = color if p.valid else "none"
        ring = ' stroke-width="1.5"' if id(p) in on_frontier else ""
        edge = "#222" if id(p) in on_frontier else color
        state = "valid" if p.valid else "invalid"
        body.append(
            f'<circle class="pt {state}" cx="{sx(p.x):.1f}" cy="{sy(p.y):.1f}" r="4.5" '
            f'fill="{fill}" stroke="{edge}"{ring} data-x="{p.x:.6g}" data-y="{p.y:.6g}">'
            f"<title>{escape(p.series)} {escape(p.label)}: {_fmt(p.x)} tok/s/user, "
            f"{_fmt(p.y)} tok/s/GPU"
            f"{'' if p.valid else f' (invalid: {p.reason}; not on the frontier)'}"
            "</title></circle>"
        )
    body.append(f'<rect x="{ML}" y="{MT}" width="{pw}" height="{ph}" class="ax"/>')
    body.append(
        f'<text x="{ML + pw / 2}" y="{MT + ph + 36}" text-anchor="middle" class="l">'
        f"{escape(x_label)}</text>"
        f'<text transform="translate(16 {MT + ph / 2}) rotate(-90)" text-anchor="middle" '
        f'class="l">{escape(y_label)}</text>'
    )
    for i, name in enumerate(series):
        stride = (W - ML) / LEGEND_COLUMNS
        lx, ly = ML + stride * (i % LEGEND_COLUMNS), H + 16 * (i // LEGEND_COLUMNS) - 4
        shown = name if len(name) <= LEGEND_CHARS else name[: LEGEND_CHARS - 1] + "…"
        body.append(
            f'<rect x="{lx:.0f}" y="{ly - 9}" width="10" height="10" '
            f'fill="{PALETTE[i % len(PALETTE)]}"/><text x="{lx + 14:.0f}" y="{ly}" class="k">'
            f"{escape(shown)}<title>{escape(name)}</title></text>"
        )
    return head + "".join(body) + "</svg>"
