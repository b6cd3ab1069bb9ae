"""The request-rate axis of the capacity search (`benchmark.capacity.axis: request_rate`): the
same decisions over an integer grid of rate levels (rate = level x request_rate_step), each
point an open-loop sa-bench phase of ceil(rate x seconds_per_point) requests."""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from srt_bench import BuildContext, build_plan, decode_run_config, run_plan
from srt_bench.capacity import SearchSpec, Stop, build_capacity_result, build_search_spec, decide
from srt_bench.capacity.run import build_load, build_point
from srt_bench.errors import BenchConfigError
from srt_bench.plans import CapacityPlan
from srt_bench.results import result_stem
from srt_bench.sa_bench import PhaseLoad
from srt_bench.sa_bench_settings import build_sa_bench_settings
from srt_bench.testing import FixedStreamServer, LatencyCurve, ServerBehaviour
from srt_schema.bench_result import BenchResult
from srt_schema.capacity_axis import requests_per_point
from srt_schema.recipe import CapacitySearchConfig, CapacityTargets
from srt_schema.rollup_capacity import CapacityPoint, CapacityResult, TargetReading

RateCurve = Callable[[float], float]


def _spec(**fields: object) -> SearchSpec:
    config = CapacitySearchConfig(
        targets=CapacityTargets(ttft_p99_ms=200.0),
        axis="request_rate",
        **fields,  # type: ignore[arg-type]
    )
    return build_search_spec(config)


def _point(spec: SearchSpec, level: int, value: float, why: str) -> CapacityPoint:
    rate = spec.rate(level)
    reading = TargetReading(
        target="ttft_p99_ms",
        value_ms=value,
        ci_low_ms=value * 0.99,
        ci_high_ms=value * 1.01,
        samples=1000,
        meets=value <= 200.0,
    )
    load = build_load(spec, level)
    return CapacityPoint(
        concurrency=load.concurrency,
        axis="request_rate",
        request_rate=rate,
        meets=value <= 200.0,
        overloaded=False,
        completed=1000,
        failed=0,
        readings=(reading,),
        why=why,
        result_path=f"sa-bench_x/{result_stem(load.concurrency, 1, None, None, request_rate=rate)}",
    )


def _search(spec: SearchSpec, curve: RateCurve) -> CapacityResult:
    points: list[CapacityPoint] = []
    while True:
        decision = decide(spec, points)
        if isinstance(decision, Stop):
            return build_capacity_result(spec, points, decision)
        level = decision.value
        assert level not in {spec.value_of(p) for p in points}, f"{level} measured twice"
        assert spec.min_value <= level <= spec.max_value
        points.append(_point(spec, level, curve(spec.rate(level)), decision.why))


def _knee(rate: float) -> float:
    """p99 TTFT of a server flat at 20 ms up to 20 req/s, then 8 ms more per req/s."""
    return 20.0 + 8.0 * max(0.0, rate - 20.0)


def _queue(rate: float) -> float:
    """p99 TTFT of a server that saturates at 50 req/s (an M/M/1-like rise): 19 ms unloaded."""
    return 19.0 / (1.0 - rate / 50.0) if rate < 50.0 else 1e6


def _truth(curve: RateCurve) -> float:
    """The highest rate of the 0.5 req/s grid in [1, 200] whose p99 TTFT is within 200 ms."""
    return max(k * 0.5 for k in range(2, 401) if curve(k * 0.5) <= 200.0)


def test_a_rate_search_finds_the_scripted_rate_within_the_tolerance_in_a_few_points() -> None:
    spec = _spec(min_request_rate=1.0, max_request_rate=200.0, request_rate_step=0.5)
    result = _search(spec, _knee)
    truth = _truth(_knee)
    assert truth == 42.5
    assert result.status == "found", result.stopped
    assert (result.axis, result.capacity, result.next_up) == ("request_rate", None, None)
    assert result.capacity_request_rate is not None and result.next_up_request_rate is not None
    assert truth / 1.05 <= result.capacity_request_rate <= truth
    rates = [p.request_rate for p in result.points]
    assert rates == [1.0, 8.0, 64.0, 40.0, 41.5, 43.5]
    # the bottom of the range, one climb step of x8, then as on the concurrency axis
    assert result.points[1].why == "one point so far: step up x8 (capped at max)"
    # the log lines and the statement say the rates, not the grid levels
    assert result.statement.startswith(
        "capacity 41.5 req/s (next point up 43.5 req/s misses), confident: request rate "
        "41.5 req/s meets the targets: ttft_p99_ms 192.0 ms"
    )
    assert result.stopped == (
        "41.5 req/s meets every target and 43.5 req/s does not (ttft_p99_ms 208.0 ms > 200); "
        "43.5 req/s is within 5% of 41.5 req/s"
    )


def test_a_saturating_server_is_found_within_the_tolerance_and_the_budget() -> None:
    spec = _spec(min_request_rate=1.0, max_request_rate=200.0, request_rate_step=0.5)
    result = _search(spec, _queue)
    truth = _truth(_queue)
    assert truth == 45.0
    assert result.status == "found", result.stopped
    assert result.capacity_request_rate is not None
    assert truth / 1.05 <= result.capacity_request_rate <= truth
    assert len(result.points) <= spec.max_points
    # every measured rate lies on the grid and in the range
    rates = [p.request_rate for p in result.points]
    assert all(r is not None and 1.0 <= r <= 200.0 and (r / 0.5).is_integer() for r in rates)


def test_the_range_ends_are_the_rate_fields() -> None:
    spec = _spec(min_request_rate=2.0, max_request_rate=6.0, request_rate_step=0.25)
    assert (spec.min_value, spec.max_value, spec.rate(spec.min_value)) == (8, 24, 2.0)
    at_max = _search(spec, lambda _r: 50.0)
    assert at_max.status == "at_max" and at_max.capacity_request_rate == 6.0
    assert at_max.stopped == "max_request_rate 6 req/s meets every target"
    assert [p.request_rate for p in at_max.points] == [2.0, 6.0]
    below = _search(spec, lambda _r: 500.0)
    assert (below.status, below.capacity_request_rate) == ("below_min", None)
    assert below.stopped.startswith("min_request_rate 2 req/s misses the targets: ")
    assert below.statement.startswith("no capacity in [2 req/s, 6 req/s], ")


def test_the_grid_rounds_the_range_inwards_and_has_defaults() -> None:
    spec = _spec(min_request_rate=0.33, max_request_rate=0.97, request_rate_step=0.1)
    assert (spec.rate(spec.min_value), spec.rate(spec.max_value)) == (0.4, 0.9)
    default = _spec(max_request_rate=64.0)
    assert (default.rate(default.min_value), default.request_rate_step) == (1.0, 0.1)
    assert default.seconds_per_point == 30.0
    with pytest.raises(BenchConfigError, match=r"needs max_request_rate"):
        _spec()
    with pytest.raises(BenchConfigError, match=r"no multiple of request_rate_step 10 lies in"):
        _spec(min_request_rate=1.0, max_request_rate=4.0, request_rate_step=10.0)
    with pytest.raises(BenchConfigError, match=r"seconds_per_point: request_rate_step 0.1 x "):
        _spec(max_request_rate=4.0, seconds_per_point=5.0)


def test_each_rate_point_sends_its_seconds_of_arrivals_and_lets_them_all_in() -> None:
    spec = _spec(max_request_rate=64.0, seconds_per_point=10.0)
    # open loop: no arrival waits, the in-flight cap is the point's request count
    assert build_load(spec, 25) == PhaseLoad(concurrency=25, request_rate=2.5, requests=25)
    assert build_load(spec, 3) == PhaseLoad(concurrency=3, request_rate=0.3, requests=3)
    assert requests_per_point(0.05, 10.0) == 1 and requests_per_point(2.5, 30.0) == 75
    assert requests_per_point(0.3, 10.0) == 3 == math.ceil(round(0.3 * 10.0, 6))
    # step x seconds >= 1: every level of the grid sends its own count (runs are told apart by it)
    counts = [build_load(spec, level).concurrency for level in range(1, 641)]
    assert len(set(counts)) == len(counts)
    # the concurrency axis keeps the settings' rate and request count
    plain = build_search_spec(CapacitySearchConfig(targets=CapacityTargets(ttft_p99_ms=1.0)))
    assert build_load(plain, 12) == PhaseLoad(concurrency=12)


def test_rate_points_get_their_own_result_files() -> None:
    a = result_stem(8, 4, 2, 2, request_rate=2.5)
    b = result_stem(8, 4, 2, 2, request_rate=3.0)
    assert (a, b) == (
        "results_concurrency_8_gpus_4_ctx_2_gen_2_rate_2.5",
        "results_concurrency_8_gpus_4_ctx_2_gen_2_rate_3",
    )
    assert result_stem(8, 4, 2, 2) == "results_concurrency_8_gpus_4_ctx_2_gen_2"


def test_a_rate_point_reads_its_rate_from_its_result() -> None:
    spec = _spec(max_request_rate=64.0)
    doc = {
        "max_concurrency": 75,
        "request_rate": 2.5,
        "completed": 2,
        "failed": 0,
        "errors": ["", ""],
        "ttfts": [0.1, 0.12],
        "e2els": [0.2, 0.22],
        "itls": [[0.01], [0.01]],
        "output_lens": [2, 2],
        "benchmark_outcome": {
            "status": "passed",
            "requested": 2,
            "completed": 2,
            "failed": 0,
            "max_failure_rate": 0.05,
        },
    }
    point = build_point(spec, msgspec.convert(doc, BenchResult), why="w", result_path="p")
    assert (point.axis, point.request_rate, point.concurrency) == ("request_rate", 2.5, 75)
    assert spec.value_of(point) == 25
    assert spec.point_name(25) == "request rate 2.5 req/s"


#: TTFT = 10 ms + 20 ms per request in flight (itself included): under Poisson arrivals at rate
#: r with E2E ~ TTFT, the mean in flight is about 13r / (1000 - 20r), so latency climbs without
#: bound toward 50 req/s and p90 TTFT crosses 200 ms a few req/s below that.
RATE_CURVE = LatencyCurve(ttft_ms=10.0, itl_ms=1.0, ttft_ms_per_stream=20.0)


@pytest.mark.slow
def test_a_rate_search_against_the_test_server_measures_each_rate_as_its_own_run(
    tiny_model: Path, tmp_path: Path
) -> None:
    capacity = {
        "axis": "request_rate",
        "targets": {"ttft_p90_ms": 200.0},
        "min_request_rate": 5,
        "max_request_rate": 80,
        "request_rate_step": 1,
        "seconds_per_point": 2,
    }
    behaviour = ServerBehaviour(honour_max_tokens=True, curve=RATE_CURVE)
    with FixedStreamServer(behaviour) as server:
        doc = {
            "benchmark": {
                "type": "sa-bench",
                "isl": 16,
                "osl": 4,
                "random_range_ratio": 1.0,
                "num_warmup_mult": 1,
                "reuse_http_connections": True,
                "capacity": capacity,
            },
            "endpoint": server.url,
            "model_name": "tiny",
            "tokenizer_path": str(tiny_model),
            "total_gpus": 1,
            "output_dir": str(tmp_path),
        }
        config = decode_run_config(msgspec.json.encode(doc))
        plan = build_plan(config, BuildContext(out_dir=tmp_path))
        assert isinstance(plan, CapacityPlan) and plan.spec.axis == "request_rate"
        lines: list[str] = []
        assert run_plan(plan, config, tmp_path, log=lines.append, stop=threading.Event()) == 0
    rollup = json.loads((tmp_path / "benchmark-rollup.json").read_text())
    found = rollup["capacity"]
    rates = [p["request_rate"] for p in found["points"]]
    print(f"capacity {found['capacity_request_rate']} req/s from points {rates}")
    assert found["axis"] == "request_rate" and found["status"] == "found", found["stopped"]
    assert (found["capacity"], found["next_up"]) == (None, None)
    assert rates[0] == 5.0 and len(rates) == len(set(rates)) <= 10
    points = {p["request_rate"]: p for p in found["points"]}
    assert points[found["capacity_request_rate"]]["meets"]
    assert not points[found["next_up_request_rate"]]["meets"]
    # the answer is above the first point and below the knee at 50 req/s, where the scripted
    # latency alone is unbounded (machine load only adds latency: it can lower the answer, so
    # how close it comes to the knee is benchmarks/capacity_live.py's to print, not a test's)
    assert 5.0 < found["capacity_request_rate"] < 50.0
    # every point is its own run with its own result file, whose request_rate is the point's
    assert len(rollup["runs"]) == len(rates)
    for p in found["points"]:
        assert p["axis"] == "request_rate"
        result = json.loads((tmp_path / p["result_path"]).read_text())
        assert result["request_rate"] == p["request_rate"]
        # seconds_per_point: ceil(rate x 2 s) measured requests, all let in (the cap)
        count = math.ceil(p["request_rate"] * 2)
        assert result["completed"] + result["failed"] == count
        assert result["max_concurrency"] == p["concurrency"] == count
        assert p["result_path"].endswith(f"_rate_{p['request_rate']:g}.json")
    assert sorted(r["request_throughput"] for r in rollup["runs"]) == sorted(
        json.loads((tmp_path / p["result_path"]).read_text())["request_throughput"]
        for p in found["points"]
    )
    # the log names each point by its rate and says what was found
    text = "\n".join(lines)
    assert "capacity: point 1: request rate 5 req/s: the bottom of the range" in text
    assert "capacity: point 2: request rate 40 req/s: one point so far" in text
    assert "request rate 5 req/s: 10 measured requests, rate 5.0, at most 10 in flight" in text
    shown = ", ".join(f"{r:g} req/s" for r in rates)
    assert (
        f"capacity: found: capacity {found['capacity_request_rate']:g} req/s "
        f"({len(rates)} points measured: {shown})"
    ) in text
    assert f"capacity: {found['statement']}" in text


@pytest.mark.parametrize(
    ("bench", "message"),
    [
        ({"req_rate": 5}, r"^\$\.benchmark\.req_rate: axis request_rate chooses each point's"),
        (
            {"workload": {"type": "multi-turn", "turns": 2}},
            r"^\$\.benchmark\.workload: a capacity search on axis request_rate sends",
        ),
        (
            {"num_prompts_mult": 8},
            r"^\$\.benchmark\.num_prompts_mult: a point of axis request_rate measures",
        ),
    ],
)
def test_srt_bench_refuses_what_the_rate_axis_sets_itself(
    bench: dict[str, object], message: str
) -> None:
    capacity = {"axis": "request_rate", "targets": {"ttft_p99_ms": 9}, "max_request_rate": 8}
    doc = {
        "benchmark": {"type": "sa-bench", "isl": 8, "osl": 8, "capacity": capacity, **bench},
        "endpoint": "http://127.0.0.1:1",
        "model_name": "tiny",
        "tokenizer_path": "/m",
        "total_gpus": 1,
        "output_dir": "/o",
    }
    config = decode_run_config(msgspec.json.encode(doc))
    with pytest.raises(BenchConfigError, match=message):
        build_sa_bench_settings(config)
