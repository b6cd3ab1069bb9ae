from __future__ import annotations

import math

import pytest

from srt_bench.records import RequestRecord
from srt_bench.stats import (
    Goodput,
    build_phase_metrics,
    mean,
    peak_output_tokens_per_s,
    percentile,
    stdev,
    summarize,
)


def test_percentile_interpolates_linearly_between_ranks() -> None:
    values = [4.0, 1.0, 3.0, 2.0]  # sorted: 1 2 3 4
    assert percentile(values, 50) == 2.5
    assert percentile(values, 0) == 1.0
    assert percentile(values, 100) == 4.0
    # rank = 3 * 0.9 = 2.7 -> 3 + 0.7 * (4 - 3)
    assert percentile(values, 90) == pytest.approx(3.7)
    assert percentile(values, 99) == pytest.approx(3.97)
    assert percentile([7.0], 99) == 7.0


def test_percentile_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError, match="empty"):
        percentile([], 50)


def test_mean_and_population_stdev() -> None:
    assert mean([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]) == 5.0
    assert stdev([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]) == 2.0


def test_summarize_reports_milliseconds() -> None:
    s = summarize([0.010, 0.020, 0.030], (50.0, 99.0), why_empty="x")
    assert s.count == 3
    assert s.mean_ms == pytest.approx(20.0)
    assert s.median_ms == pytest.approx(20.0)
    assert s.std_ms == pytest.approx(math.sqrt(200 / 3))
    assert s.percentiles_ms[0] == (50.0, pytest.approx(20.0))
    assert s.percentiles_ms[1] == (99.0, pytest.approx(29.8))
    assert s.unmeasured is None


def test_summarize_of_nothing_says_why_and_has_no_numbers() -> None:
    s = summarize([], (99.0,), why_empty="because")
    assert (s.count, s.mean_ms, s.median_ms, s.std_ms) == (0, None, None, None)
    assert s.percentiles_ms == ((99.0, None),)
    assert s.unmeasured == "because"


def _rec(**kw: object) -> RequestRecord:
    base: dict[str, object] = {"success": True, "prompt_tokens": 10}
    base.update(kw)
    return RequestRecord(**base)  # type: ignore[arg-type]


def test_phase_metrics_against_hand_computed_values() -> None:
    # Request A: ttft 0.1 s, latency 0.5 s, 5 tokens -> tpot (0.5-0.1)/4 = 0.1 s; gaps .1 .1 .1 .1
    a = _rec(
        output_tokens=5,
        token_source="usage",
        server_prompt_tokens=12,
        ttft=0.1,
        itls=(0.1, 0.1, 0.1, 0.1),
        latency=0.5,
        send_time=0.0,
        chunk_times=(0.1, 0.2, 0.3, 0.4, 0.5),
    )
    # Request B: ttft 0.3 s, latency 1.0 s, 8 tokens -> tpot 0.7/7 = 0.1 s; gaps .2 .5
    b = _rec(
        output_tokens=8,
        token_source="tokenizer",
        ttft=0.3,
        itls=(0.2, 0.5),
        latency=1.0,
        send_time=0.5,
        chunk_times=(0.8, 1.0, 1.5),
    )
    failed = _rec(success=False, error="HTTP 500", latency=0.2)
    m = build_phase_metrics([a, b, failed], duration=2.0, total_gpus=4, percentiles=(50.0, 99.0))
    assert (m.requested, m.completed, m.failed) == (3, 2, 1)
    assert m.total_input_tokens == 12 + 10  # server count for A, client count for B
    assert m.total_output_tokens == 13
    assert m.request_throughput == 1.0
    assert m.output_throughput == 6.5
    assert m.total_token_throughput == 17.5
    assert m.output_throughput_per_gpu == 6.5 / 4
    assert m.total_token_throughput_per_gpu == 17.5 / 4
    assert m.token_sources == {"tokenizer": 1, "usage": 1}
    ttft = m.latencies["ttft"]
    assert ttft.mean_ms == pytest.approx(200.0)
    assert ttft.median_ms == pytest.approx(200.0)
    assert ttft.std_ms == pytest.approx(100.0)
    tpot = m.latencies["tpot"]
    assert tpot.mean_ms == pytest.approx(100.0)
    itl = m.latencies["itl"]  # pooled: .1 .1 .1 .1 .2 .5
    assert itl.count == 6
    assert itl.mean_ms == pytest.approx(1100.0 / 6)
    assert itl.median_ms == pytest.approx(100.0)
    assert dict(itl.percentiles_ms)[99.0] == pytest.approx(485.0)  # .2 + .95 * .3
    e2el = m.latencies["e2el"]
    assert e2el.mean_ms == pytest.approx(750.0)
    assert m.request_goodput is None


def test_tokens_only_in_usage_leave_ttft_itl_tpot_unmeasured() -> None:
    r = _rec(output_tokens=32, token_source="usage", ttft=None, latency=0.4)
    m = build_phase_metrics([r], duration=1.0, total_gpus=1, percentiles=(99.0,))
    assert m.total_output_tokens == 32
    for name in ("ttft", "itl", "tpot"):
        assert m.latencies[name].mean_ms is None
        assert m.latencies[name].unmeasured
    assert "tokens only in usage" in (m.latencies["ttft"].unmeasured or "")
    assert m.latencies["e2el"].mean_ms == pytest.approx(400.0)


def test_goodput_counts_requests_meeting_every_slo() -> None:
    fast = _rec(output_tokens=3, ttft=0.05, latency=0.25)  # tpot 0.1
    slow_ttft = _rec(output_tokens=3, ttft=0.5, latency=0.7)  # tpot 0.1
    no_ttft = _rec(output_tokens=3, ttft=None, latency=0.2)
    m = build_phase_metrics(
        [fast, slow_ttft, no_ttft],
        duration=2.0,
        total_gpus=1,
        percentiles=(99.0,),
        goodput=Goodput(ttft_ms=100.0, tpot_ms=150.0),
    )
    assert m.request_goodput == 0.5  # one good request over 2 s


def test_peak_output_tokens_uses_a_ten_second_moving_average() -> None:
    # 12 one-second bins; 100 tokens in each of seconds 0..9, 1000 in second 10.
    recs = [
        _rec(output_tokens=100, chunk_times=tuple(float(s) + 0.5 for _ in range(1)))
        for s in range(10)
    ]
    recs = [_rec(output_tokens=100, chunk_times=(s + 0.5,)) for s in range(10)]
    recs.append(_rec(output_tokens=1000, chunk_times=(10.5,)))
    # windows: [0..9] = 1000/10 = 100; [1..10] = (900 + 1000)/10 = 190; [2..11] = 180
    assert peak_output_tokens_per_s(recs, 12.0) == pytest.approx(190.0)


def test_peak_spreads_tokens_over_chunks_and_short_runs_average_all_bins() -> None:
    r = _rec(output_tokens=4, chunk_times=(0.1, 0.2, 1.1, 1.2))
    assert peak_output_tokens_per_s([r], 2.0) == pytest.approx(2.0)
    assert peak_output_tokens_per_s([_rec(output_tokens=0)], 2.0) is None
