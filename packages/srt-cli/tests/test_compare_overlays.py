"""The compare page's overlays (compare/overlays.py) and the run names on its charts
(recipe_diff.build_setting_values, build_legends): pure functions on hand-made runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from srt_cli.compare.inputs import RunData
from srt_cli.compare.overlays import QUANTILES, build_distributions
from srt_cli.compare.recipe_diff import build_legends, build_setting_values
from srt_cli.compare.records import Window
from srt_schema.rollup import Rollup, RollupConfig

ROLLUP = Rollup(
    benchmark_type="sa-bench", timestamp="t", config=RollupConfig(model=None, isl=None, osl=None)
)


def _window(c: int, ttft: tuple[float, ...]) -> Window:
    return Window(
        concurrency=c,
        gpus=1,
        duration=1.0,
        requests=len(ttft),
        output_lens=tuple(3 for _ in ttft),
        ttft_ms=ttft,
        itl_ms=tuple((1.0, 2.0) for _ in ttft),
        tpot_ms=None,
        e2el_ms=tuple(t + 3.0 for t in ttft),
    )


def _run(label: str, windows: dict[int, Window]) -> RunData:
    return RunData(label=label, path=Path(label), rollup=ROLLUP, windows=windows)


def test_each_metric_a_concurrency_two_runs_measured_is_one_distribution() -> None:
    a = _run("a", {4: _window(4, (10.0, 20.0, 30.0)), 16: _window(16, (5.0,))})
    b = _run("b", {4: _window(4, (1.0, 2.0))})
    dists = build_distributions([a, b])
    # c=16: one run only; TPOT: no run has per-request TPOT
    assert [(d.label, d.concurrency) for d in dists] == [("TTFT", 4), ("ITL", 4), ("E2EL", 4)]
    ttft = dists[0]
    assert [run for run, _ in ttft.runs] == ["a", "b"]
    curve = dict(ttft.runs)["a"]
    assert len(curve) == QUANTILES + 1
    assert curve[0] == (0.0, 10.0)  # the fastest request
    assert curve[-1][0] == pytest.approx(0.999)
    assert curve[-1][1] == pytest.approx(20.0 + 10.0 * (2 * 0.999 - 1))  # p99.9, interpolated
    # ITL pooled over requests: a's gaps are 1 and 2 ms
    assert dict(dists[1].runs)["a"][0] == (0.0, 1.0)


def test_the_settings_that_differed_name_the_runs_and_shorten_only_when_too_long() -> None:
    recipes = [
        {"engine": {"speedup_ratio": 2}, "benchmark": {"concurrencies": [4]}},
        {"engine": {"speedup_ratio": 5}, "benchmark": {"concurrencies": [16]}},
    ]
    paths = ["benchmark.concurrencies", "engine.speedup_ratio"]
    assert build_setting_values(recipes, paths[1:], width=48) == [
        "engine.speedup_ratio=2",
        "engine.speedup_ratio=5",
    ]
    # "benchmark.concurrencies=[16], engine.speedup_ratio=5" is 52 characters: the value would
    # be cut off, so every run's settings go by their last segment
    assert build_setting_values(recipes, paths, width=48) == [
        "concurrencies=[4], speedup_ratio=2",
        "concurrencies=[16], speedup_ratio=5",
    ]
    legends = build_legends(["local-20261206T013851Z", "local-20261206T013857Z"], recipes, paths)
    assert legends == [
        "local-20261206T013851Z: concurrencies=[4], speedup_ratio=2",
        "local-20261206T013857Z: concurrencies=[16], speedup_ratio=5",
    ]
    assert all(len(legend) <= 60 for legend in legends)
    # two settings ending the same way keep their whole paths
    twins = [{"a": {"x": 1}, "b": {"x": 1}}, {"a": {"x": 2222222222}, "b": {"x": 3333333333}}]
    assert build_setting_values(twins, ["a.x", "b.x"], width=10) == [
        "a.x=1, b.x=1",
        "a.x=2222222222, b.x=3333333333",
    ]
    assert build_setting_values([None, recipes[0]], paths, width=48)[0] == ""
