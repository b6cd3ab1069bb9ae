"""srtctl compare's statistics: the bootstrap (fixed seed, known data), the recipe diff and
version drift, and the validity exclusion rules."""

from __future__ import annotations

import math

import pytest

from srt_cli.compare.bootstrap import (
    delta_interval,
    percentile,
    percentile_replicates,
    pooled_percentile_replicates,
    rng_for,
    sum_replicates,
)
from srt_cli.compare.model import invalid_windows
from srt_cli.compare.recipe_diff import build_recipe_diff, build_version_drift, render_verdict
from srt_schema.rollup import decode_rollup


def test_percentile_interpolates_between_closest_ranks() -> None:
    ordered = [1.0, 2.0, 3.0, 4.0]
    assert percentile(ordered, 0) == 1.0
    assert percentile(ordered, 50) == 2.5
    assert percentile(ordered, 100) == 4.0
    assert percentile(ordered, 99) == pytest.approx(3.97)


def test_the_same_seed_and_names_give_the_same_replicates_and_another_seed_does_not() -> None:
    values = [float(v) for v in range(1, 101)]
    one = percentile_replicates(values, (50.0,), rng=rng_for(19, "run", 4, "ttft"), resamples=50)
    two = percentile_replicates(values, (50.0,), rng=rng_for(19, "run", 4, "ttft"), resamples=50)
    other = percentile_replicates(values, (50.0,), rng=rng_for(20, "run", 4, "ttft"), resamples=50)
    assert one == two
    assert one != other
    assert len(one) == 50


def test_a_constant_shift_drawn_with_the_same_generator_has_an_exact_interval() -> None:
    """Known data: run B is run A plus 5 ms on every request. Resampled with the same generator
    state, every replicate delta is exactly 5, so the 95% interval is [5, 5]."""
    a = [float(v) for v in range(10, 60)]
    b = [v + 5.0 for v in a]
    ra = percentile_replicates(a, (50.0, 99.0), rng=rng_for(19, "x"), resamples=200)
    rb = percentile_replicates(b, (50.0, 99.0), rng=rng_for(19, "x"), resamples=200)
    for k in (0, 1):
        lo, hi = delta_interval([r[k] for r in ra], [r[k] for r in rb]) or (math.nan, math.nan)
        assert lo == pytest.approx(5.0)
        assert hi == pytest.approx(5.0)


def test_independent_resamples_cover_the_true_shift_and_exclude_zero() -> None:
    a = [float(v % 17) for v in range(400)]
    b = [v + 3.0 for v in a]
    ra = percentile_replicates(a, (50.0,), rng=rng_for(19, "a"), resamples=1000)
    rb = percentile_replicates(b, (50.0,), rng=rng_for(19, "b"), resamples=1000)
    lo, hi = delta_interval([r[0] for r in ra], [r[0] for r in rb]) or (math.nan, math.nan)
    assert lo <= 3.0 <= hi
    assert lo > 0  # a 3 ms shift of 400 requests is not noise


def test_identical_samples_give_an_interval_around_zero() -> None:
    a = [float(v % 13) for v in range(300)]
    ra = sum_replicates(a, 0.5, rng=rng_for(19, "a"), resamples=500)
    rb = sum_replicates(a, 0.5, rng=rng_for(19, "b"), resamples=500)
    lo, hi = delta_interval([r[0] for r in ra], [r[0] for r in rb]) or (math.nan, math.nan)
    assert lo < 0 < hi


def test_sum_replicates_of_constant_tokens_are_the_rate_exactly() -> None:
    reps = sum_replicates([64.0] * 10, 1 / 2.0, rng=rng_for(19), resamples=20)
    assert {r[0] for r in reps} == {320.0}


def test_pooled_itl_replicates_resample_requests_and_thin_only_for_the_resampling() -> None:
    groups = [sorted([0.5] * 90 + [2.0] * 10) for _ in range(50)]  # 5000 gaps > the budget
    reps = pooled_percentile_replicates(
        groups, (50.0, 99.0), rng=rng_for(19), resamples=30, budget=1000
    )
    assert len(reps) == 30
    assert all(r[0] == 0.5 and r[1] == 2.0 for r in reps)


def test_one_setting_differed() -> None:
    a = {"name": "x", "roles": {"decode": {"args": {"x": 4, "y": "on"}}}}
    b = {"name": "x_sweep_8", "roles": {"decode": {"args": {"x": 8, "y": "on"}}}}
    changes = build_recipe_diff(a, b)
    assert [c.path for c in changes] == ["roles.decode.args.x"]
    assert render_verdict(changes) == "one setting differed: roles.decode.args.x 4 -> 8"


def test_several_settings_are_listed_as_confounds() -> None:
    a = {"engine": {"type": "mocker", "speedup_ratio": 10}, "benchmark": {"isl": 128}}
    b = {"engine": {"type": "mocker", "speedup_ratio": 20}, "benchmark": {"isl": 256, "osl": 64}}
    verdict = render_verdict(build_recipe_diff(a, b))
    assert verdict == (
        "3 settings differed (confounded): benchmark.isl 128 -> 256; benchmark.osl (unset) -> "
        "64; engine.speedup_ratio 10 -> 20"
    )
    assert render_verdict([]) == "same recipe: no setting differed"
    assert render_verdict(None).startswith("recipe unknown")


def test_version_drift_from_the_fingerprints() -> None:
    def fp(dynamo: str, pkg: str) -> dict[str, object]:
        return {
            "python_version": "3.11.7",
            "frameworks": {"dynamo": dynamo, "vllm": None},
            "pip_packages": {"/py": [f"ai-dynamo=={dynamo}", f"httpx=={pkg}"]},
        }

    base = {"agg_w0": fp("1.6.1", "0.28.0"), "agg_w1": fp("1.6.1", "0.28.0")}
    other = {"agg_w0": fp("1.7.0", "0.28.0"), "agg_w1": fp("1.7.0", "0.28.0")}
    assert build_version_drift(base, other, baseline_srtctl="0.1.0", other_srtctl="0.2.0") == [
        "srtctl 0.1.0 -> 0.2.0",
        "dynamo 1.6.1 -> 1.7.0",
        "pip ai-dynamo 1.6.1 -> 1.7.0",
    ]
    assert build_version_drift(base, base) == []


ROLLUP = b"""{"benchmark_type": "sa-bench", "timestamp": "t", "config": {"model": "m", "isl": 1,
"osl": 1}, "runs": [%s], "validity": %s}"""
RUN = (
    '{"concurrency": %d, "throughput_toks": 1, "request_throughput": 1, "ttft_mean_ms": 1,'
    '"ttft_p99_ms": 1, "tpot_mean_ms": 1, "tpot_p99_ms": 1, "itl_mean_ms": 1, "itl_p99_ms": 1,'
    '"e2el_mean_ms": 1, "completed_requests": 1, "total_input_tokens": 1, '
    '"total_output_tokens": 1, "total_token_throughput": 1, "ttft_median_ms": 1, '
    '"tpot_median_ms": 1, "itl_median_ms": 1, "validity": %s}'
)
VALID = '{"verdict": "valid"}'
SATURATED = (
    '{"verdict": "invalid", "reasons": [{"code": "client_saturated", "detail": "lag 84 ms"}]}'
)


def _rollup(runs: list[str], top: str) -> bytes:
    return ROLLUP % (",".join(runs).encode(), top.encode())


def test_an_invalid_window_is_excluded_alone() -> None:
    top = (
        '{"verdict": "invalid", "reasons": [{"code": "client_saturated", '
        '"detail": "concurrency 16: lag 84 ms"}]}'
    )
    rollup = decode_rollup(_rollup([RUN % (4, VALID), RUN % (16, SATURATED)], top))
    assert invalid_windows(rollup) == {16: ("client_saturated",)}


def test_a_run_wide_reason_invalidates_every_window() -> None:
    top = '{"verdict": "invalid", "reasons": [{"code": "clock_skew", "detail": "node-02 off"}]}'
    rollup = decode_rollup(_rollup([RUN % (4, VALID), RUN % (16, VALID)], top))
    assert invalid_windows(rollup) == {4: ("clock_skew",), 16: ("clock_skew",)}


def test_thinned_itl_replicates_centre_on_the_estimate_from_every_gap() -> None:
    rng = rng_for(1)
    groups = [sorted(rng.expovariate(1.0) for _ in range(60)) for _ in range(200)]  # 12,000 gaps
    full = sorted(g for gaps in groups for g in gaps)
    reps = pooled_percentile_replicates(groups, (99.0,), rng=rng_for(19), resamples=400)
    centre = percentile(sorted(r[0] for r in reps), 50.0)
    # keeping every 3rd gap alone would put the p99 about 7% low
    assert centre == pytest.approx(percentile(full, 99.0), rel=0.02)


def test_order_statistic_replicates_match_building_each_resample() -> None:
    """The replicates drawn from order statistics have the distribution of the percentile of
    an explicit resample (the textbook bootstrap), here compared on 4,000 replicates each."""
    gen = rng_for(3)
    values = [gen.lognormvariate(0.0, 0.8) for _ in range(150)]
    fast = percentile_replicates(values, (50.0, 99.0), rng=rng_for(19), resamples=4000)
    slow_rng = rng_for(20)
    slow = []
    for _ in range(4000):
        sample = sorted(slow_rng.choices(values, k=len(values)))
        slow.append((percentile(sample, 50.0), percentile(sample, 99.0)))
    for k in (0, 1):
        a = sorted(r[k] for r in fast)
        b = sorted(r[k] for r in slow)
        for q in (5.0, 50.0, 95.0):
            assert percentile(a, q) == pytest.approx(percentile(b, q), rel=0.03)


def test_relative_bounds_come_from_each_replicates_ratio_and_never_pass_minus_100() -> None:
    from srt_cli.compare.bootstrap import relative_interval

    baseline = [5.0, 20.0] * 50  # a noisy baseline around 12.5 ms
    other = [1.0] * 100
    interval = delta_interval(baseline, other)
    assert interval is not None
    low = interval[0]
    assert low / 12.5 * 100.0 < -100.0  # the old way: absolute bound / point baseline
    rel = relative_interval(baseline, other)
    assert rel is not None
    assert -100.0 < rel[0] <= rel[1] < 0.0
    assert rel == pytest.approx((-95.0, -80.0))
