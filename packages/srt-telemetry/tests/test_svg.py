"""svg.py keeps its text apart: the legend above the plot, thinned tick and category labels,
point and window labels placed where they touch nothing (by the same width estimate the code
uses; tests/test_browser_pages.py checks the boxes Chromium draws)."""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET

from srt_telemetry.svg import Band, Series, bar_chart, line_chart, text_width

Box = tuple[float, float, float, float]


def _texts(svg: str, cls: str) -> list[tuple[float, float, str]]:
    return [
        (float(x), float(y), t)
        for x, y, t in re.findall(
            rf'<text x="([\d.]+)" y="([\d.]+)"[^>]*class="{cls}">([^<]*)', svg
        )
    ]


def _plot_top(svg: str) -> float:
    (top,) = re.findall(r'<rect x="64" y="([\d.]+)" width="640" height="[\d.]+" class="ax"/>', svg)
    return float(top)


def test_the_legend_sits_above_the_plot() -> None:
    series = [Series(f"endpoint {i}", [0, 1], [i, i + 1]) for i in range(6)]
    svg = line_chart("t", series, x_label="x", y_label="y")
    ET.fromstring(svg)
    top = _plot_top(svg)
    swatches = re.findall(r'<rect x="[\d.]+" y="([\d.]+)" width="10" height="10"', svg)
    assert len(swatches) == 6
    assert all(float(y) + 10 <= top for y in swatches)
    assert top == 28 + 2 * 14  # two legend rows push the plot down, the plot keeps its height
    assert 'viewBox="0 0 720 328"' in svg


def test_crowded_categories_are_thinned() -> None:
    cats = [str(2**i) for i in range(40)]  # up to 13 digits
    svg = bar_chart("t", cats, [("v", [float(i) for i in range(40)])], x_label="c", y_label="v")
    shown = [t for _, _, t in _texts(svg, "k") if t in cats]
    assert 1 < len(shown) < 40 and shown[0] == "1"
    xs = [x for x, _, t in _texts(svg, "k") if t in cats]
    widths = [text_width(t) for t in shown]
    for i in range(len(xs) - 1):  # centred labels: half of each width on either side
        assert xs[i] + widths[i] / 2 < xs[i + 1] - widths[i + 1] / 2
    assert svg.count("<title>v @ ") == 40  # every bar is still drawn, with its value


def test_point_labels_never_overlap_and_crowded_ones_are_left_out() -> None:
    xs = [100.0] * 11 + [200.0]  # eleven points on top of each other
    ys = [50.0] * 11 + [60.0]
    labels = [f"c={2**i}" for i in range(12)]
    svg = line_chart("t", [Series("s", xs, ys, labels)], x_label="x", y_label="y", markers=True)
    placed = [(x, y, t) for x, y, t in _texts(svg, "k") if t.startswith("c=")]
    assert 0 < len(placed) < 12
    boxes: list[Box] = [(x, y - 10, x + text_width(t), y) for x, y, t in placed]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (a, b)
    assert svg.count("<circle") == 12  # every point is drawn; its label is its tooltip
    assert re.findall(r"<circle[^>]*><title>(c=\d+)</title>", svg) == labels


def test_adjacent_windows_take_a_second_row_then_keep_only_their_tooltip() -> None:
    bands = [Band(i * 1.0, i * 1.0 + 0.9, f"c={2**i}") for i in range(30)]
    svg = line_chart("t", [Series("w", [0, 30], [1, 2])], x_label="s", y_label="W", bands=bands)
    labels = _texts(svg, "bl")
    assert {y for _, y, _ in labels} == {float(_plot_top(svg) + 228 - 4), _plot_top(svg) + 213}
    assert 2 < len(labels) < 30 and svg.count('class="band"') == 30
    for row in {y for _, y, _ in labels}:
        on_row = sorted((x, t) for x, y, t in labels if y == row)
        for (x0, t0), (x1, _) in itertools.pairwise(on_row):
            assert x0 + text_width(t0, 9) < x1


def test_no_negative_axis_for_values_that_are_not() -> None:
    svg = line_chart(
        "t",
        [Series("s", [0.0, 100.0], [1.0, 2.0], ["a", "b"])],
        x_label="x",
        y_label="y",
        markers=True,
    )
    ticks = [t for _, y, t in _texts(svg, "k") if y == _plot_top(svg) + 228 + 17]
    assert ticks[0] == "0" and not any(t.startswith("-") for t in ticks)
