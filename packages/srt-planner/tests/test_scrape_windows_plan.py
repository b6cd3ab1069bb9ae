"""Window sampling in the plan (srt_planner.telemetry): unless the job sets the Tachometer's
``collect_interval_ms``, the scraper watches the folder where sa-bench stamps its measurement
windows and scrapes every endpoint at least 10 times inside each; a set interval is kept as is."""

from __future__ import annotations

import json
from typing import Any

from srt_planner import plan_allocation, plan_job
from srt_planner.plan import JobPlan
from srt_planner.telemetry import TACHOMETER_INTERVAL, WINDOW_SAMPLES
from srt_schema.cluster import ClusterConfig
from srt_schema.load import LoadedJob, load_recipe_text

CLUSTER = ClusterConfig(default_account="a", default_partition="p")
RECIPE = """
schema: 2
name: w
model: {path: /m, container: img, precision: bf16}
resources: {gpus_per_node: 8}
engine: {type: sglang}
roles: {agg: {nodes: 1, workers: 1}}
frontend: {type: dynamo}
benchmark: {type: sa-bench, isl: 8, osl: 8, concurrencies: [2]}
"""


def _job(extra: str = "") -> LoadedJob:
    [job] = load_recipe_text(RECIPE + extra, file="w.yaml", cluster=CLUSTER)
    return job


def _plan(job: LoadedJob) -> JobPlan:
    request = plan_allocation(job.recipe, CLUSTER, runner_name=None)
    nodes = [f"node-{i:02d}" for i in range(1, request.nodes + 1)]
    return plan_job(
        job.recipe,
        CLUSTER,
        nodes,
        "77",
        log_dir="/out/77/logs",
        scrape_interval_given=job.sets(*TACHOMETER_INTERVAL),
    )


def _scrape(plan: JobPlan) -> dict[str, Any]:
    (content,) = [f.content for f in plan.files if f.path == "tachometer_config.json"]
    config: dict[str, Any] = json.loads(content)
    return config


def _bench_env(plan: JobPlan) -> dict[str, str]:
    (bench,) = [p for p in plan.processes if p.name == "benchmark"]
    return dict(bench.env)


def test_by_default_the_scraper_samples_the_windows_the_benchmark_stamps() -> None:
    plan = _plan(_job())
    config = _scrape(plan)
    # the scraper runs on the host, the benchmark in its container: one folder, two paths
    assert config["window_dir"] == "/out/77/logs/telemetry/windows"
    assert config["window_samples"] == WINDOW_SAMPLES == 10
    assert _bench_env(plan)["SRT_MEASUREMENT_WINDOW_DIR"] == "/logs/telemetry/windows"
    assert {e["collect_interval_ms"] for e in config["endpoints"]} == {1000}


def test_with_power_telemetry_the_scraper_watches_powers_window_folder() -> None:
    power = "telemetry: {enabled: true, dcgm_exporter: {container_image: dcgm, port: 9401}}\n"
    plan = _plan(_job(power))
    assert _scrape(plan)["window_dir"] == "/out/77/logs/power/windows"
    assert _bench_env(plan)["SRT_MEASUREMENT_WINDOW_DIR"] == "/logs/power/windows"


def test_an_interval_the_recipe_sets_is_kept_without_window_sampling() -> None:
    job = _job("observability: {tachometer: {collect_interval_ms: 1000}}\n")
    assert job.sets(*TACHOMETER_INTERVAL)
    plan = _plan(job)
    config = _scrape(plan)
    assert "window_dir" not in config and "window_samples" not in config
    assert {e["collect_interval_ms"] for e in config["endpoints"]} == {1000}
    assert "SRT_MEASUREMENT_WINDOW_DIR" not in _bench_env(plan)


def test_a_benchmark_that_stamps_no_windows_gets_no_window_sampling() -> None:
    custom = RECIPE.replace(
        "benchmark: {type: sa-bench, isl: 8, osl: 8, concurrencies: [2]}",
        "benchmark: {type: custom, command: 'true'}",
    )
    [loaded] = load_recipe_text(custom, file="w.yaml", cluster=CLUSTER)
    plan = _plan(loaded)
    assert "window_samples" not in _scrape(plan)
    assert "SRT_MEASUREMENT_WINDOW_DIR" not in _bench_env(plan)
