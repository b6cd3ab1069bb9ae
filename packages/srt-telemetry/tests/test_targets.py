"""Declared latency targets as chart lines (targets.py), and how the charts draw them."""

from __future__ import annotations

import re

from srt_telemetry.pareto import ParetoPoint, pareto_svg
from srt_telemetry.svg import Series, bar_chart, line_chart
from srt_telemetry.targets import (
    TargetLine,
    TargetView,
    metric_lines,
    metric_x_lines,
    per_user_lines,
)

TTFT = TargetView(name="ttft_p99_ms", metric="ttft", percentile=99.0, limit_ms=500.0)
TPOT = TargetView(name="tpot_p90_ms", metric="tpot", percentile=90.0, limit_ms=40.0)


def test_each_chart_gets_the_lines_of_the_targets_that_fit_it() -> None:
    targets = [TTFT, TPOT, TTFT]  # two runs declaring the same target: one line
    assert metric_lines(targets, "ttft") == [TargetLine("y", 500.0, "target p99 <= 500 ms")]
    assert metric_lines(targets, "itl") == []
    assert metric_x_lines(targets, "ttft") == [TargetLine("x", 500.0, "target TTFT p99 <= 500 ms")]
    assert per_user_lines(targets) == [
        TargetLine("x", 25.0, "target TPOT p90 <= 40 ms = 25 tok/s/user")
    ]


def _line_xs(svg: str) -> list[float]:
    return [float(x) for x in re.findall(r'<line class="target" x1="([\d.]+)"', svg)]


def test_a_target_beyond_the_data_widens_the_axis_so_its_line_is_inside_the_plot() -> None:
    chart = line_chart(
        "c",
        [Series("s", [10.0, 20.0], [1.0, 2.0])],
        x_label="ms",
        y_label="tok/s",
        targets=[TargetLine("x", 300.0, "target TTFT p99 <= 300 ms")],
    )
    [x] = _line_xs(chart)
    assert 64 < x <= 720 - 16  # inside the plot (svg.ML, W - MR)
    assert "target TTFT p99 &lt;= 300 ms</text>" in chart
    bars = bar_chart(
        "b", ["4"], [("p99", [100.0])], x_label="c", y_label="ms",
        targets=[TargetLine("y", 500.0, "target p99 <= 500 ms")],
    )  # fmt: skip
    assert bars.count('class="target"') == 1 and "target p99 &lt;= 500 ms" in bars
    pareto = pareto_svg("p", [ParetoPoint(100.0, 50.0, "a", "c=4")], targets=per_user_lines([TPOT]))
    assert len(_line_xs(pareto)) == 1 and "25 tok/s/user" in pareto
    assert 'class="target"' not in pareto_svg("p", [ParetoPoint(100.0, 50.0, "a", "c=4")])
