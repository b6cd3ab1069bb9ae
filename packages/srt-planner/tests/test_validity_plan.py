"""The ``validity`` finalize step (srt_planner.validity): every job with a benchmark ends with
``srt-bench validity``, after power and profiles, with what the planner knows as arguments."""

from __future__ import annotations

from typing import Any

from planner_testkit import RecipeFactory

from srt_planner import plan_allocation, plan_job
from srt_planner.plan import JobPlan
from srt_schema.cluster import ClusterConfig

CLUSTER = ClusterConfig(default_account="a", default_partition="p")
LOCAL = ClusterConfig(launcher="local")
AGG = {"agg": {"nodes": 1, "workers": 1}}
BENCH = {"type": "sa-bench", "isl": 8, "osl": 8, "concurrencies": [4, 16, 4]}


def _plan(recipe: Any, cluster: ClusterConfig = CLUSTER) -> JobPlan:
    request = plan_allocation(recipe, cluster, runner_name=None)
    nodes = [f"node-{i:02d}" for i in range(1, request.nodes + 1)]
    return plan_job(recipe, cluster, nodes, "77", log_dir="/out/77/logs")


def test_a_benchmark_job_ends_with_the_verdict(make_recipe: RecipeFactory) -> None:
    plan = _plan(make_recipe(roles=AGG, benchmark=BENCH))
    [step] = plan.finalize
    assert step.name == "validity"
    assert step.argv == (
        "srt-bench", "validity", "--log-dir", "/out/77/logs",
        "--expect-concurrency", "4", "--expect-concurrency", "16",
    )  # fmt: skip
    assert (step.log_file, step.fails_job) == ("validity.out", False)


def test_gpu_power_adds_its_folder_and_the_verdict_comes_after_energy(
    make_recipe: RecipeFactory,
) -> None:
    telemetry = {
        "enabled": True,
        "storage_subdir": "watts",
        "dcgm_exporter": {"container_image": "dcgm", "port": 9401},
    }
    plan = _plan(make_recipe(roles=AGG, benchmark=BENCH, telemetry=telemetry))
    assert [s.name for s in plan.finalize][-2:] == ["energy", "validity"]
    step = plan.finalize[-1]
    at = step.argv.index("--power-dir")
    assert step.argv[at + 1] == "/out/77/logs/watts"


def test_cpu_power_alone_is_not_gpu_power_and_local_runs_share_one_clock(
    make_recipe: RecipeFactory,
) -> None:
    telemetry = {"enabled": True, "cpu_power": {"enabled": True}}
    plan = _plan(make_recipe(roles=AGG, benchmark=BENCH, telemetry=telemetry), LOCAL)
    step = plan.finalize[-1]
    assert step.name == "validity"
    assert "--power-dir" not in step.argv
    assert step.argv[-1] == "--single-host"


def test_no_benchmark_no_verdict(make_recipe: RecipeFactory) -> None:
    assert _plan(make_recipe(roles=AGG, benchmark={"type": "manual"})).finalize == ()
    custom = _plan(make_recipe(roles=AGG, benchmark={"type": "custom", "command": "true"}))
    [step] = custom.finalize
    assert "--expect-concurrency" not in step.argv  # no run per concurrency to expect
