"""Timing error against a token schedule (srt_bench.testing.timing), on hand-made records."""

from __future__ import annotations

import itertools

import pytest

from srt_bench.records import RequestRecord
from srt_bench.testing import TokenSchedule, token_times
from srt_bench.testing.timing import (
    build_delivery_error,
    build_distribution_error,
    build_paired_error,
    build_truth,
)

FLAT = TokenSchedule(ttft_s=0.100, itl_s=0.010)


def _record(
    times: tuple[float, ...], *, late_first: float = 0.0, late_gap: float = 0.0
) -> RequestRecord:
    """What a client would record for a request whose tokens arrived at `times` (s after send),
    the first `late_first` late and every gap `late_gap` longer."""
    arrivals = [times[0] + late_first]
    for a, b in itertools.pairwise(times):
        arrivals.append(arrivals[-1] + (b - a) + late_gap)
    return RequestRecord(
        success=True,
        prompt_tokens=2,
        output_tokens=len(times),
        ttft=arrivals[0],
        itls=tuple(b - a for a, b in itertools.pairwise(arrivals)),
        latency=arrivals[-1],
        chunk_times=tuple(arrivals),
    )


def test_a_flat_schedule_has_its_nominal_truth_in_both_itl_definitions() -> None:
    truth = build_truth(FLAT, ["a", "b", "c"], 5)
    assert truth.ttft_p50_ms == pytest.approx(100.0)
    assert truth.ttft_p99_ms == pytest.approx(100.0)
    assert truth.itl_p50_ms == pytest.approx({"pooled": 10.0, "per-request": 10.0})
    assert truth.itl_p99_ms == pytest.approx({"pooled": 10.0, "per-request": 10.0})


def test_jitter_widens_pooled_gaps_more_than_per_request_means() -> None:
    schedule = TokenSchedule(ttft_s=0.1, itl_s=0.01, jitter=0.5, seed=1)
    truth = build_truth(schedule, [f"k{i}" for i in range(200)], 40)
    assert truth.ttft_p99_ms > 140.0
    assert truth.itl_p99_ms["pooled"] > 14.0
    assert 10.0 < truth.itl_p99_ms["per-request"] < 12.0


def test_distribution_error_is_measured_minus_truth_in_the_clients_definition() -> None:
    truth = build_truth(FLAT, ["a"], 5)
    e = build_distribution_error(
        truth, ttft_p50_ms=101.5, ttft_p99_ms=99.0, itl_p50_ms=10.25, itl_p99_ms=12.0,
        itl_kind="per-request",
    )  # fmt: skip
    assert (e.ttft_p50_ms, e.ttft_p99_ms) == pytest.approx((1.5, -1.0))
    assert (e.itl_p50_ms, e.itl_p99_ms) == pytest.approx((0.25, 2.0))


def test_paired_error_compares_each_request_with_its_own_schedule() -> None:
    schedule = TokenSchedule(ttft_s=0.05, itl_s=0.01, jitter=0.3, seed=2)
    keys = [f"prompt {i}" for i in range(10)]
    exact = [_record(token_times(schedule, k, 6)) for k in keys]
    e = build_paired_error(schedule, keys, exact, 6)
    assert e is not None
    assert e.ttft_p99_ms == pytest.approx(0.0, abs=1e-9)
    assert e.itl_p99_ms == pytest.approx(0.0, abs=1e-9)
    late = [_record(token_times(schedule, k, 6), late_first=0.002, late_gap=0.0005) for k in keys]
    e = build_paired_error(schedule, keys, late, 6)
    assert e is not None
    assert e.ttft_p50_ms == pytest.approx(2.0) and e.itl_p99_ms == pytest.approx(0.5)
    # the same records against the wrong prompts are far off
    shuffled = build_paired_error(schedule, keys[1:] + keys[:1], exact, 6)
    assert shuffled is not None and shuffled.ttft_p99_ms > 1.0


def test_paired_error_skips_failed_requests_and_is_none_without_chunks() -> None:
    failed = RequestRecord(success=False, error="boom", prompt_tokens=1)
    assert build_paired_error(FLAT, ["a"], [failed], 5) is None


def test_delivery_error_is_the_clients_delay_after_each_write() -> None:
    written = (10.0, 10.05, 10.10, 10.15)
    # every token stamped 1 ms after its write: the first token 1 ms late, gaps exact
    steady = tuple(t + 0.001 for t in written)
    e = build_delivery_error([(steady, written)])
    assert e is not None
    assert e.ttft_p50_ms == pytest.approx(1.0) and e.itl_p99_ms == pytest.approx(0.0, abs=1e-9)
    # one token held 4 ms (a stalled loop): the gaps either side of it are 4 ms off
    held = (10.001, 10.055, 10.101, 10.151)
    e = build_delivery_error([(held, written)])
    assert e is not None and e.itl_p99_ms == pytest.approx(4.0, abs=0.05)
    assert e.itl_p50_ms == pytest.approx(4.0, abs=0.05)
    # a stream missing either side is left out; none left is None
    assert build_delivery_error([((), written), (steady, ())]) is None
