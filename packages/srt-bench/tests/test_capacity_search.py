"""The capacity search's decisions (srt_bench.capacity.search / outcome), on simulated curves.

A simulated point reads a known latency curve exactly (the interval a few percent wide), so each
test knows the true capacity: the highest concurrency whose value is within the limit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from srt_bench.capacity import SearchSpec, Stop, build_capacity_result, build_search_spec, decide
from srt_bench.errors import BenchConfigError
from srt_schema.recipe import CapacitySearchConfig, CapacityTargets
from srt_schema.rollup_capacity import CapacityPoint, CapacityResult, TargetReading

Curve = Callable[[int], Mapping[str, float]]


def _spec(**targets: float) -> SearchSpec:
    return build_search_spec(
        CapacitySearchConfig(targets=CapacityTargets(**targets))  # type: ignore[arg-type]
    )


def _point(spec: SearchSpec, c: int, values: Mapping[str, float], why: str) -> CapacityPoint:
    overloaded = values.get("failed", 0) > 0
    readings = tuple(
        TargetReading(
            target=t.name,
            value_ms=values[t.name],
            ci_low_ms=values[t.name] * 0.99,
            ci_high_ms=values[t.name] * 1.01,
            samples=1000,
            meets=values[t.name] <= t.limit_ms,
        )
        for t in spec.targets
    )
    return CapacityPoint(
        concurrency=c,
        meets=not overloaded and all(r.meets for r in readings),
        overloaded=overloaded,
        completed=1000,
        failed=int(values.get("failed", 0)),
        readings=readings,
        why=why,
        result_path=f"sa-bench_x/results_concurrency_{c}_gpus_1.json",
    )


def _search(spec: SearchSpec, curve: Curve) -> CapacityResult:
    points: list[CapacityPoint] = []
    while True:
        decision = decide(spec, points)
        if isinstance(decision, Stop):
            return build_capacity_result(spec, points, decision)
        c = decision.value
        assert c not in {p.concurrency for p in points}, f"{c} measured twice"
        assert spec.min_value <= c <= spec.max_value
        points.append(_point(spec, c, curve(c), decision.why))


def _truth(curve: Curve, name: str, limit: float, top: int = 1024) -> int:
    """The true capacity (0: not even one stream)."""
    return max((c for c in range(1, top + 1) if curve(c)[name] <= limit), default=0)


def _measured(result: CapacityResult) -> list[int]:
    return [p.concurrency for p in result.points]


def test_a_linear_curve_is_found_within_5_percent_in_5_points() -> None:
    def curve(c: int) -> dict[str, float]:
        return {"ttft_p99_ms": 10.0 + c}

    spec = _spec(ttft_p99_ms=310.0)
    result = _search(spec, curve)
    assert _truth(curve, "ttft_p99_ms", 310.0) == 300
    assert result.status == "found"
    assert result.capacity is not None and 300 / 1.05 <= result.capacity <= 300
    assert _measured(result) == [1, 8, 64, 292, 306]
    assert result.next_up == 306
    # the 1, 2, 4 ... 1,024 grid needs 11 points and only brackets the answer within 2x
    assert len([2**k for k in range(11)]) == 11


def test_the_search_trace_says_why_each_point_was_chosen() -> None:
    result = _search(_spec(ttft_p99_ms=310.0), lambda c: {"ttft_p99_ms": 10.0 + c})
    whys = [p.why for p in result.points]
    assert whys[0] == "the bottom of the range"
    assert whys[1] == "one point so far: step up x8 (capped at max)"
    assert whys[2].startswith("predicted crossing 300.0 (extrapolated from 1 and 8) is beyond")
    assert whys[3] == "just below the predicted crossing 300.0 (extrapolated from 8 and 64)"
    assert whys[4] == (
        "predicted crossing 300.0 is within the tolerance of 292 (extrapolated from 64 and 292)"
    )
    assert result.stopped == (
        "292 meets every target and 306 does not (ttft_p99_ms 316.0 ms > 310); 306 is within 5% "
        "of 292"
    )


def test_a_knee_is_found_after_the_climb_overshoots() -> None:
    def curve(c: int) -> dict[str, float]:
        return {"ttft_p99_ms": 20.0 + 2.0 * max(0, c - 64)}

    spec = _spec(ttft_p99_ms=420.0)
    truth = _truth(curve, "ttft_p99_ms", 420.0)
    result = _search(spec, curve)
    assert result.status == "found"
    assert result.capacity is not None and truth / 1.05 <= result.capacity <= truth
    # a knee right at a flat point is the worst case of log-log interpolation
    assert len(result.points) <= 8


@pytest.mark.parametrize(
    ("name", "curve", "limit"),
    [
        ("convex", lambda c: {"itl_p99_ms": 20.0 + 0.002 * c * c}, 420.0),
        ("hockey", lambda c: {"itl_p99_ms": 20.0 + 5.0 * max(0, c - 400)}, 420.0),
        ("concave", lambda c: {"itl_p99_ms": 5.0 + 10.0 * math.sqrt(c)}, 250.0),
        ("steps", lambda c: {"itl_p99_ms": 10.0 * (1 + c // 50)}, 95.0),
    ],
)
def test_other_shapes_are_found_within_the_tolerance(name: str, curve: Curve, limit: float) -> None:
    spec = _spec(itl_p99_ms=limit)
    truth = _truth(curve, "itl_p99_ms", limit)
    result = _search(spec, curve)
    assert result.status == "found", (name, _measured(result), result.stopped)
    assert result.capacity is not None and truth / 1.05 <= result.capacity <= truth, name
    assert len(result.points) <= spec.max_points


def test_the_lowest_crossing_of_several_targets_binds() -> None:
    def curve(c: int) -> dict[str, float]:
        return {"ttft_p99_ms": 20.0 + 0.5 * c, "itl_p90_ms": 2.0 + 0.05 * c}

    spec = _spec(ttft_p99_ms=200.0, itl_p90_ms=17.0)  # TTFT allows 360, ITL 300
    result = _search(spec, curve)
    assert result.capacity is not None and 300 / 1.05 <= result.capacity <= 300
    hi = next(p for p in result.points if p.concurrency == result.next_up)
    assert [r.target for r in hi.readings if not r.meets] == ["itl_p90_ms"]


def test_a_missed_minimum_ends_the_search_with_no_capacity() -> None:
    result = _search(_spec(ttft_p99_ms=5.0), lambda c: {"ttft_p99_ms": 10.0 + c})
    assert (result.status, result.capacity, _measured(result)) == ("below_min", None, [1])
    assert result.stopped == "min_concurrency 1 misses the targets: ttft_p99_ms 11.0 ms > 5"
    assert result.statement.startswith("no capacity in [1, 1024], confident: ")


def test_a_flat_curve_climbs_to_the_maximum() -> None:
    result = _search(_spec(e2el_p50_ms=100.0), lambda c: {"e2el_p50_ms": 50.0})
    assert result.status == "at_max"
    assert _measured(result) == [1, 8, 64, 512, 1024]
    assert result.capacity == 1024 and result.next_up is None
    assert result.statement.startswith("capacity at least 1024, confident: ")


def test_an_overloaded_point_is_bisected_not_interpolated() -> None:
    def curve(c: int) -> dict[str, float]:
        # past 100 streams requests fail and the latencies are meaningless
        return {"ttft_p99_ms": 10.0, "failed": 50.0} if c > 100 else {"ttft_p99_ms": 10.0}

    result = _search(_spec(ttft_p99_ms=500.0), curve)
    assert result.points[4].why == (
        "bisect [64, 512]: 512 is overloaded, its latencies are not interpolated"
    )
    # bisection alone halves the log width per point: 10 points (the default budget) suffice
    assert result.status == "found" and len(result.points) == 10
    assert result.capacity is not None and 100 / 1.05 <= result.capacity <= 100
    hi = next(p for p in result.points if p.concurrency == result.next_up)
    assert hi.overloaded and "requests failed (overloaded)" in result.stopped


def test_an_invalid_point_is_a_miss_that_is_bisected_not_interpolated() -> None:
    """Past 200 streams the client saturates: its latencies look fine but time the client.
    The search claims no capacity there, and says why."""

    def curve(c: int) -> dict[str, float]:
        return {"ttft_p99_ms": 10.0 + 6.0 * c}

    spec = _spec(ttft_p99_ms=1000.0)  # the server's own truth would be 165
    points: list[CapacityPoint] = []
    while not isinstance(decision := decide(spec, points), Stop):
        c = decision.value
        point = _point(spec, c, curve(c), decision.why)
        if c > 120:
            point = msgspec.structs.replace(
                point,
                meets=False,
                invalid=("client_saturated: p99 event-loop lag 80.0 ms > 50 ms",),
            )
        points.append(point)
    result = build_capacity_result(spec, points, decision)
    assert result.capacity is not None and result.capacity <= 120
    assert result.status == "found" and result.capacity >= 120 / 1.05
    above = next(p for p in result.points if p.concurrency == result.next_up)
    assert above.invalid and "its measurement is invalid (client_saturated: " in result.stopped
    assert any("is invalid, its latencies are not interpolated" in p.why for p in result.points)


def test_the_point_budget_ends_the_search_with_the_bracket() -> None:
    spec = build_search_spec(
        CapacitySearchConfig(targets=CapacityTargets(ttft_p99_ms=310.0), max_points=3)
    )
    result = _search(spec, lambda c: {"ttft_p99_ms": 10.0 + c})
    assert (result.status, _measured(result)) == ("max_points", [1, 8, 64])
    assert result.stopped == "max_points 3 measured; the capacity is at least 64"


def test_the_range_bounds_every_point() -> None:
    spec = build_search_spec(
        CapacitySearchConfig(
            targets=CapacityTargets(ttft_p99_ms=310.0), min_concurrency=4, max_concurrency=40
        )
    )
    result = _search(spec, lambda c: {"ttft_p99_ms": 10.0 + c})
    assert result.status == "at_max" and _measured(result)[0] == 4 and result.capacity == 40


def test_confidence_needs_both_intervals_clear_of_the_limit() -> None:
    spec = _spec(ttft_p99_ms=100.0)

    def point(c: int, value: float, low: float, high: float | None) -> CapacityPoint:
        reading = TargetReading(
            target="ttft_p99_ms",
            value_ms=value,
            ci_low_ms=low,
            ci_high_ms=high,
            samples=300,
            meets=value <= 100.0,
        )
        return CapacityPoint(
            concurrency=c,
            meets=value <= 100.0,
            overloaded=False,
            completed=300,
            failed=0,
            readings=(reading,),
            why="-",
            result_path="-",
        )

    stop = Stop(status="found", why="-")
    clear = build_capacity_result(
        spec, [point(40, 95.0, 94.0, 97.0), point(41, 104, 102, 106)], stop
    )
    assert clear.confident
    assert clear.statement == (
        "capacity 40 (next point up 41 misses), confident: concurrency 40 meets the targets: "
        "ttft_p99_ms 95.0 ms (95% CI 94.0-97.0, n=300) <= 100 | concurrency 41 misses: "
        "ttft_p99_ms 104.0 ms (95% CI 102.0-106.0, n=300) > 100"
    )
    unsure = build_capacity_result(
        spec, [point(40, 95.0, 90.0, None), point(41, 104, 102, 106)], stop
    )
    assert not unsure.confident
    assert "not confident (a 95% interval crosses a limit)" in unsure.statement


def test_a_search_without_targets_or_with_an_empty_range_is_refused() -> None:
    with pytest.raises(BenchConfigError, match=r"capacity.targets: a capacity search needs"):
        build_search_spec(CapacitySearchConfig(targets=CapacityTargets()))
    with pytest.raises(BenchConfigError, match=r"min_concurrency: 9 is above max_concurrency 8"):
        build_search_spec(
            CapacitySearchConfig(
                targets=CapacityTargets(ttft_p99_ms=1.0), min_concurrency=9, max_concurrency=8
            )
        )


@settings(max_examples=150, deadline=None)
@given(
    base=st.floats(min_value=1.0, max_value=50.0),
    knee=st.integers(min_value=0, max_value=600),
    slope=st.floats(min_value=0.01, max_value=20.0),
    power=st.floats(min_value=0.5, max_value=2.5),
    limit=st.floats(min_value=60.0, max_value=2000.0),
)
def test_any_rising_curve_is_found_within_the_tolerance_or_the_budget_says_so(
    base: float, knee: int, slope: float, power: float, limit: float
) -> None:
    def curve(c: int) -> dict[str, float]:
        return {"ttft_p99_ms": base + slope * max(0, c - knee) ** power}

    spec = _spec(ttft_p99_ms=limit)
    result = _search(spec, curve)
    truth = _truth(curve, "ttft_p99_ms", limit)
    assert len(result.points) <= spec.max_points
    if truth == 1024:
        assert result.status in ("at_max", "max_points")
    if truth == 0:
        assert (result.status, result.capacity) == ("below_min", None)
    elif result.status == "found":
        assert result.capacity is not None and truth / 1.05 <= result.capacity <= truth
    elif result.status == "max_points":
        # never wrong, only not yet tight: the bracket holds the truth
        assert result.capacity is not None and result.capacity <= truth
        assert result.next_up is None or truth < result.next_up
    else:
        assert result.status == "at_max" and truth == 1024


def test_a_point_far_over_the_target_is_bisected_toward() -> None:
    def curve(c: int) -> dict[str, float]:
        return {"ttft_p99_ms": 20.0 + 50.0 * max(0, c - 100)}

    result = _search(_spec(ttft_p99_ms=420.0), curve)
    assert result.points[4].why == (
        "bisect [64, 512]: 512 is far over the target (ttft_p99_ms 20620.0 ms > 3x)"
    )
    assert result.status == "found"
    assert result.capacity is not None and 108 / 1.05 <= result.capacity <= 108


def test_a_wider_tolerance_stops_sooner_with_a_wider_bracket() -> None:
    def curve(c: int) -> dict[str, float]:
        return {"ttft_p99_ms": 20.0 + 0.002 * c * c}

    tight = _search(_spec(ttft_p99_ms=420.0), curve)
    loose = _search(
        build_search_spec(
            CapacitySearchConfig(targets=CapacityTargets(ttft_p99_ms=420.0), tolerance=0.3)
        ),
        curve,
    )
    assert tight.next_up is not None and tight.capacity is not None
    assert loose.next_up is not None and loose.capacity is not None
    assert tight.next_up <= tight.capacity * 1.05 < loose.next_up <= loose.capacity * 1.3
    assert len(loose.points) < len(tight.points)


def test_max_step_bounds_the_climb() -> None:
    spec = build_search_spec(
        CapacitySearchConfig(targets=CapacityTargets(ttft_p99_ms=100.0), max_step=2.0)
    )
    result = _search(spec, lambda c: {"ttft_p99_ms": 50.0})
    assert _measured(result) == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    assert result.status == "max_points"
