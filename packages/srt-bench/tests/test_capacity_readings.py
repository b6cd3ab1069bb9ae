"""A capacity point's readings (srt_bench.capacity.readings / run.build_point): the percentile
the result document reports, its distribution-free 95% interval, the request gate."""

from __future__ import annotations

import msgspec
import pytest

from srt_bench.capacity import build_point, build_readings, build_search_spec, percentile_interval
from srt_bench.records import RequestRecord
from srt_bench.results import build_result
from srt_bench.stats import build_phase_metrics
from srt_schema.bench_result import BenchResult
from srt_schema.recipe import CapacitySearchConfig, CapacityTargets
from srt_schema.rollup import ClientLoad


def test_the_interval_is_the_order_statistics_around_the_quantile() -> None:
    ordered = [float(i) for i in range(1, 1001)]
    # n q = 500, z sqrt(n q (1 - q)) = 30.99: ranks 469 and 532
    assert percentile_interval(ordered, 50.0) == (469.0, 532.0)
    # p99 of 1000: n q = 990, half 6.17: ranks 983 and 998
    assert percentile_interval(ordered, 99.0) == (983.0, 998.0)
    # 100 samples cannot bound a p99 from above (n q = 99, half 1.95: ranks 97 and 102)
    assert percentile_interval(ordered[:100], 99.0) == (97.0, None)
    assert percentile_interval([], 90.0) == (None, None)


def _record(i: int, *, fail: bool = False) -> RequestRecord:
    if fail:
        return RequestRecord(success=False, error="HTTP 500", prompt_tokens=4)
    ttft = 0.010 + 0.0001 * i
    itls = (0.002 + 0.00001 * i, 0.003)
    return RequestRecord(
        success=True,
        prompt_tokens=4,
        output_tokens=3,
        token_source="usage",
        ttft=ttft,
        itls=itls,
        latency=ttft + sum(itls),
        chunk_times=(ttft, ttft + itls[0], ttft + sum(itls)),
    )


def _doc(records: list[RequestRecord], c: int = 8) -> BenchResult:
    percentiles = (50.0, 90.0, 99.0)
    metrics = build_phase_metrics(records, duration=1.0, total_gpus=1, percentiles=percentiles)
    return build_result(
        header={"max_concurrency": c, "request_rate": float("inf")},
        metrics=metrics,
        records=records,
        percentiles=percentiles,
        start_unix=0.0,
        end_unix=1.0,
        reuse_http_connections=True,
        requested_num_prompts=len(records),
    )


TARGETS = CapacityTargets(ttft_p99_ms=100.0, tpot_p90_ms=2.7, itl_p50_ms=10.0, e2el_p99_ms=1.0)


def test_readings_are_the_percentiles_the_result_document_reports() -> None:
    records = [_record(i) for i in range(200)] + [_record(0, fail=True)]
    doc = _doc(records)
    spec = build_search_spec(CapacitySearchConfig(targets=TARGETS))
    assert [t.name for t in spec.targets] == [
        "ttft_p99_ms",
        "tpot_p90_ms",
        "itl_p50_ms",
        "e2el_p99_ms",
    ]
    readings = {r.target: r for r in build_readings(doc, spec.targets)}
    for name, key in (
        ("ttft_p99_ms", "p99_ttft_ms"),
        ("tpot_p90_ms", "p90_tpot_ms"),
        ("itl_p50_ms", "p50_itl_ms"),
        ("e2el_p99_ms", "p99_e2el_ms"),
    ):
        assert readings[name].value_ms == pytest.approx(getattr(doc, key)), name
    assert readings["ttft_p99_ms"].samples == 200  # the failed request is not a sample
    assert readings["itl_p50_ms"].samples == 400  # gaps are pooled
    assert readings["ttft_p99_ms"].meets and not readings["e2el_p99_ms"].meets
    low, high = readings["itl_p50_ms"].ci_low_ms, readings["itl_p50_ms"].ci_high_ms
    assert low is not None and high is not None
    assert low <= readings["itl_p50_ms"].value_ms <= high  # type: ignore[operator]


def test_a_point_meets_only_every_target_and_the_request_gate() -> None:
    spec = build_search_spec(
        CapacitySearchConfig(targets=CapacityTargets(ttft_p99_ms=100.0, itl_p99_ms=100.0))
    )
    ok = build_point(spec, _doc([_record(i) for i in range(50)], c=8), why="w", result_path="r")
    assert (ok.concurrency, ok.meets, ok.overloaded, ok.completed, ok.failed) == (
        8,
        True,
        False,
        50,
        0,
    )
    # 10% failed requests: over the 5% gate, the point is overloaded whatever its latencies
    records = [_record(i) for i in range(45)] + [_record(0, fail=True)] * 5
    bad = build_point(spec, _doc(records, c=16), why="w", result_path="r")
    assert (bad.meets, bad.overloaded, bad.failed) == (False, True, 5)
    assert all(r.meets for r in bad.readings)
    slow = build_search_spec(CapacitySearchConfig(targets=CapacityTargets(ttft_p99_ms=5.0)))
    late = build_point(slow, _doc([_record(i) for i in range(50)]), why="w", result_path="r")
    assert (late.meets, late.overloaded) == (False, False)


def test_a_point_the_client_could_not_measure_is_invalid_and_never_meets() -> None:
    spec = build_search_spec(CapacitySearchConfig(targets=CapacityTargets(ttft_p99_ms=100.0)))
    doc = _doc([_record(i) for i in range(50)], c=32)
    load = ClientLoad(
        loop_lag_p50_ms=12.0, loop_lag_p99_ms=80.0, loop_lag_max_ms=95.0,
        lag_samples=100, cpu_seconds=0.5, wall_seconds=1.0, cpu_share=0.5,
    )  # fmt: skip
    doc = msgspec.structs.replace(doc, client_load=load)
    point = build_point(spec, doc, why="w", result_path="r")
    # its latencies are under the limit, but they timed a client 80 ms late on its own clock
    assert all(r.meets for r in point.readings)
    assert (point.meets, point.overloaded) == (False, False)
    assert point.invalid == ("client_saturated: p99 event-loop lag 80.0 ms > 50 ms",)
    calm = msgspec.structs.replace(load, loop_lag_p99_ms=3.0)
    doc = msgspec.structs.replace(doc, client_load=calm)
    assert build_point(spec, doc, why="w", result_path="r").meets


@pytest.mark.parametrize("metric", ["ttft", "tpot", "itl", "e2el"])
@pytest.mark.parametrize("p", [50, 90, 99])
def test_every_target_reads_its_metric_at_its_percentile(metric: str, p: int) -> None:
    """Each of the twelve `benchmark.capacity.targets` keys is the document's own number."""
    doc = _doc([_record(i) for i in range(300)])
    name = f"{metric}_p{p}_ms"
    spec = build_search_spec(CapacitySearchConfig(targets=CapacityTargets(**{name: 1e6})))
    (reading,) = build_readings(doc, spec.targets)
    assert reading.target == name
    assert reading.value_ms == pytest.approx(getattr(doc, f"p{p}_{metric}_ms"))


def test_the_log_line_of_an_invalid_point_says_invalid_and_why() -> None:
    from srt_bench.capacity.outcome import format_point

    spec = build_search_spec(CapacitySearchConfig(targets=CapacityTargets(ttft_p99_ms=100.0)))
    load = ClientLoad(
        loop_lag_p50_ms=12.0, loop_lag_p99_ms=80.0, loop_lag_max_ms=95.0,
        lag_samples=100, cpu_seconds=0.5, wall_seconds=1.0, cpu_share=0.5,
    )  # fmt: skip
    doc = msgspec.structs.replace(_doc([_record(i) for i in range(50)], c=16), client_load=load)
    line = format_point(spec, build_point(spec, doc, why="w", result_path="r"))
    assert line.startswith(
        "concurrency 16 is invalid (client_saturated: p99 event-loop lag 80.0 ms > 50 ms), "
        "so it counts as a miss: ttft_p99_ms "
    )
