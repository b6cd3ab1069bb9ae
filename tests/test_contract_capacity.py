"""Contract of the issue-20 recipe extensions (docs/schema-extensions.md): a recipe's
`benchmark.capacity` and `benchmark.workload` reach srt-bench through the planner's `bench.json`
unchanged (the `benchmark` block is passed verbatim) and build a capacity search over that
workload; the rollup's `capacity` block decodes for every reader (srt_schema.rollup, srtctl
status, the dashboard's view)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import yaml

import srt_bench
from srt_bench.capacity import build_capacity_result, build_search_spec
from srt_bench.capacity.search import Stop
from srt_bench.plans import CapacityPlan
from srt_bench.rollup import build_sa_bench_rollup, write_rollup
from srt_planner import plan_job
from srt_schema import load_recipe_text
from srt_schema.bench_result import BenchResult
from srt_schema.cluster import ClusterConfig
from srt_schema.recipe import CapacitySearchConfig, CapacityTargets, MultiTurnWorkload
from srt_schema.rollup import decode_rollup
from srt_schema.rollup_capacity import CapacityPoint, TargetReading

ROOT = Path(__file__).resolve().parents[1]


def _plan_bench_json() -> str:
    doc = yaml.safe_load((ROOT / "examples" / "quickstart.yaml").read_text())
    doc["benchmark"].pop("concurrencies")
    doc["benchmark"]["capacity"] = {"targets": {"ttft_p99_ms": 500, "itl_p99_ms": 25}}
    doc["benchmark"]["workload"] = {"type": "multi-turn", "turns": 4, "think_time_s": 1.5}
    (job,) = load_recipe_text(yaml.safe_dump(doc), file="q.yaml", cluster=ClusterConfig())
    local = ClusterConfig(container_runtime="none", launcher="local")
    plan = plan_job(job.recipe, local, "localhost", "1")
    validity = [s for s in plan.finalize if s.name == "validity"]
    # a search's concurrencies are not known when the job is planned: none is expected
    assert validity and "--expect-concurrency" not in validity[0].argv
    (item,) = [f for f in plan.files if f.path == "bench.json"]
    return item.content


def test_capacity_and_workload_reach_srt_bench_verbatim() -> None:
    content = _plan_bench_json()
    bench = json.loads(content)["benchmark"]
    assert bench["capacity"]["targets"]["ttft_p99_ms"] == 500.0
    assert bench["workload"] == {
        "type": "multi-turn",
        "turns": 4,
        "think_time_s": 1.5,
        "think_time_jitter": 0.0,
        "conversations": None,
        "kv_block_tokens": 16,
    }
    config = srt_bench.decode_run_config(content.encode(), source="bench.json")
    built = srt_bench.build_plan(config, srt_bench.BuildContext(out_dir=Path("/logs")))
    assert isinstance(built, CapacityPlan)
    assert built.settings.workload == MultiTurnWorkload(turns=4, think_time_s=1.5)
    assert built.settings.concurrencies == ()
    assert [t.name for t in built.spec.targets] == ["ttft_p99_ms", "itl_p99_ms"]


def test_a_rollup_with_a_capacity_block_decodes_for_every_reader(tmp_path: Path) -> None:
    from srt_cli.jobs import build_results, read_rollup
    from srt_telemetry.rollup_view import decode_rollup_view

    spec = build_search_spec(CapacitySearchConfig(targets=CapacityTargets(ttft_p99_ms=500.0)))
    reading = TargetReading(
        target="ttft_p99_ms",
        value_ms=120.0,
        ci_low_ms=110.0,
        ci_high_ms=130.0,
        samples=800,
        meets=True,
    )
    point = CapacityPoint(
        concurrency=4,
        meets=True,
        overloaded=False,
        completed=800,
        failed=0,
        readings=(reading,),
        why="the bottom of the range",
        result_path="sa-bench_x/results_concurrency_4_gpus_1.json",
    )
    capacity = build_capacity_result(spec, [point], Stop(status="at_max", why="max reached"))
    result = {
        "max_concurrency": 4,
        "model_id": "m",
        "request_throughput": 1.0,
        "output_throughput": 10.0,
    }
    rollup = msgspec.structs.replace(
        build_sa_bench_rollup([msgspec.convert(result, BenchResult)], isl=8, osl=8, timestamp="t"),
        capacity=capacity,
    )
    path = write_rollup(tmp_path, rollup, None)
    data = path.read_bytes()
    assert decode_rollup(data).capacity == capacity
    assert json.loads(data)["capacity"]["points"][0]["why"] == "the bottom of the range"
    assert decode_rollup_view(data, source=str(path)).runs[0].concurrency == 4
    rows = read_rollup(path)
    assert rows is not None and build_results(rows)[0]["concurrency"] == 4


def test_a_request_rate_search_reaches_srt_bench_and_its_record_decodes(tmp_path: Path) -> None:
    doc = yaml.safe_load((ROOT / "examples" / "quickstart.yaml").read_text())
    doc["benchmark"].pop("concurrencies")
    doc["benchmark"]["capacity"] = {
        "axis": "request_rate",
        "targets": {"ttft_p99_ms": 500},
        "max_request_rate": 64,
        "request_rate_step": 0.5,
    }
    (job,) = load_recipe_text(yaml.safe_dump(doc), file="q.yaml", cluster=ClusterConfig())
    local = ClusterConfig(container_runtime="none", launcher="local")
    plan = plan_job(job.recipe, local, "localhost", "1")
    (item,) = [f for f in plan.files if f.path == "bench.json"]
    bench = json.loads(item.content)["benchmark"]["capacity"]
    assert (bench["axis"], bench["max_request_rate"], bench["request_rate_step"]) == (
        "request_rate",
        64.0,
        0.5,
    )
    config = srt_bench.decode_run_config(item.content.encode(), source="bench.json")
    built = srt_bench.build_plan(config, srt_bench.BuildContext(out_dir=Path("/logs")))
    assert isinstance(built, CapacityPlan) and built.spec.axis == "request_rate"
    assert (built.spec.min_value, built.spec.max_value) == (2, 128)  # 1 and 64 req/s on 0.5
    # the rate block decodes for every reader; a record written before the rate axis still does
    spec = built.spec
    reading = TargetReading(
        target="ttft_p99_ms", value_ms=9.0, ci_low_ms=8.0, ci_high_ms=10.0, samples=900, meets=True
    )
    point = CapacityPoint(
        concurrency=30,
        axis="request_rate",
        request_rate=1.0,
        meets=True,
        overloaded=False,
        completed=30,
        failed=0,
        readings=(reading,),
        why="the bottom of the range",
        result_path="sa-bench_x/results_concurrency_30_gpus_1_rate_1.json",
    )
    capacity = build_capacity_result(spec, [point], Stop(status="at_max", why="max reached"))
    assert (capacity.axis, capacity.capacity, capacity.capacity_request_rate) == (
        "request_rate",
        None,
        1.0,
    )
    result = {"max_concurrency": 30, "model_id": "m", "request_rate": 1.0}
    rollup = msgspec.structs.replace(
        build_sa_bench_rollup([msgspec.convert(result, BenchResult)], isl=8, osl=8, timestamp="t"),
        capacity=capacity,
    )
    data = write_rollup(tmp_path, rollup, None).read_bytes()
    assert decode_rollup(data).capacity == capacity
    old = json.loads(data)
    for key in ("axis", "capacity_request_rate", "next_up_request_rate"):
        del old["capacity"][key]
    for p in old["capacity"]["points"]:
        del p["axis"], p["request_rate"]
    decoded = decode_rollup(json.dumps(old).encode()).capacity
    assert decoded is not None and decoded.axis == "concurrency"
    assert decoded.points[0].request_rate is None
