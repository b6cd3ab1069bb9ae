"""Power telemetry's legs in the plan (srt_planner.power): which processes, where, in which order,
what the benchmark and the finalize steps get, and that every public recipe with ``telemetry:``
that loads plans them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from planner_testkit import RecipeFactory

from srt_planner import PlannerError, plan_allocation, plan_job
from srt_planner.plan import JobPlan, ProcessSpec
from srt_schema.cluster import ClusterConfig
from srt_schema.errors import SchemaError
from srt_schema.load import load_recipe_text
from srt_schema.migrate import migrate_text

CLUSTER = ClusterConfig(default_account="a", default_partition="p")
LOCAL = ClusterConfig(launcher="local")
REPO = Path(__file__).resolve().parents[3]
CORPUS = Path(os.environ.get("SRT_CORPUS", str(REPO.parent / "shared" / "corpus")))

DISAGG = {"prefill": {"nodes": 1, "workers": 1}, "decode": {"nodes": 1, "workers": 1}}
GPU = {"container_image": "dcgm", "port": 9401}
BENCH = {"type": "sa-bench", "isl": 8, "osl": 8, "concurrencies": [2]}


def _plan(recipe: Any, cluster: ClusterConfig = CLUSTER) -> JobPlan:
    request = plan_allocation(recipe, cluster, runner_name=None)
    nodes = [f"node-{i:02d}" for i in range(1, request.nodes + 1)]
    return plan_job(recipe, cluster, nodes, "77")


def _by_name(plan: JobPlan) -> dict[str, ProcessSpec]:
    return {p.name: p for p in plan.processes}


def _file(plan: JobPlan, path: str) -> dict[str, Any]:
    (content,) = [f.content for f in plan.files if f.path == path]
    return json.loads(content)


def test_every_leg_is_planned_in_order_and_the_benchmark_gets_the_window_folder(
    make_recipe: RecipeFactory,
) -> None:
    recipe = make_recipe(
        roles=DISAGG,
        frontend={"type": "dynamo"},
        benchmark={"type": "sa-bench", "isl": 8, "osl": 8, "concurrencies": [2, 4]},
        telemetry={
            "enabled": True,
            "required": True,
            "dcgm_exporter": {**GPU, "command": "dcgm-exporter -x --address :{port}"},
            "cpu_power_exporter": {"port": 9405},
            "cpu_power": {"enabled": True},
        },
    )
    plan = _plan(recipe)
    procs = _by_name(plan)
    power = [p for p in plan.processes if p.phase == "telemetry" and p.name != "tachometer"]
    assert [(p.name, p.order, p.nodes[0]) for p in power] == [
        ("cpu-power-exporter_node-01", 0, "node-01"),
        ("cpu-power-exporter_node-02", 0, "node-02"),
        ("power-collector", 1, "node-01"),
        ("power-ready", 2, "node-01"),
        ("cpu-power-init", 0, "node-01"),
        ("cpu-power_node-01", 1, "node-01"),
        ("cpu-power_node-02", 1, "node-02"),
        ("cpu-power-ready", 2, "node-01"),
    ]
    assert procs["power-ready"].critical and procs["power-ready"].oneshot
    assert not procs["cpu-power-ready"].critical  # cpu_power.required is false
    assert not procs["power-collector"].critical
    # One DCGM exporter per worker node, telemetry's own command with {port} filled in.
    dcgm = [p for p in plan.processes if p.role == "dcgm-exporter"]
    assert [p.nodes[0] for p in dcgm] == ["node-01", "node-02"]
    assert dcgm[0].argv == ("dcgm-exporter", "-x", "--address", ":9401")
    bench = procs["benchmark"]
    assert bench.env["SRT_MEASUREMENT_WINDOW_DIR"] == "/logs/power/windows"
    config = _file(plan, "power.json")
    assert [e["url"] for e in config["endpoints"]] == [
        "http://node-01:9401/metrics",
        "http://node-02:9401/metrics",
    ]
    assert len(config["expected_devices"]) == 16  # 8 GPUs on each node
    assert {d["assignments"][0]["worker_role"] for d in config["expected_devices"]} == {
        "prefill",
        "decode",
    }
    assert config["expected_windows"] == [
        {"benchmark_type": "sa-bench", "concurrency": 2},
        {"benchmark_type": "sa-bench", "concurrency": 4},
    ]
    assert config["required"] is True
    assert config["exporter_command"] == "dcgm-exporter -x --address :9401"
    assert [e["hostname"] for e in config["cpu_exporter_endpoints"]] == ["node-01", "node-02"]
    assert _file(plan, "cpu_power.json")["expected_nodes"] == ["node-01", "node-02"]
    steps = {s.name: s for s in plan.finalize}
    assert list(steps) == ["power-finalize", "cpu-power-finalize", "energy", "validity"]
    assert steps["power-finalize"].stop_first == ("power-collector",)
    assert steps["power-finalize"].exited_watch == tuple(p.name for p in dcgm)
    assert steps["power-finalize"].fails_job
    assert not steps["energy"].fails_job
    # Tachometer scrapes the same exporter, through the dcgm filter with the GPU owners.
    scrape = _file(plan, "tachometer_config.json")
    (first,) = [e for e in scrape["endpoints"] if e["name"] == "dcgm-exporter_node-01"]
    assert first["filter"] == "dcgm"
    assert first["gpu_metadata"]["0"] == {
        "worker_role": "prefill",
        "worker_index": "0",
        "worker_process": "0",
    }


def test_a_capacity_search_leaves_its_windows_to_the_run(make_recipe: RecipeFactory) -> None:
    """The search picks its concurrencies while it runs: no list, the benchmark type instead."""
    capacity = {"targets": {"ttft_p99_ms": 500}, "max_concurrency": 64}
    recipe = make_recipe(
        benchmark={"type": "sa-bench", "isl": 8, "osl": 8, "capacity": capacity},
        telemetry={"enabled": True, "dcgm_exporter": GPU},
    )
    config = _file(_plan(recipe), "power.json")
    assert (config["expected_windows"], config["run_time_windows"]) == ([], "sa-bench")
    fixed_recipe = make_recipe(benchmark=BENCH, telemetry={"enabled": True, "dcgm_exporter": GPU})
    fixed = _file(_plan(fixed_recipe), "power.json")
    assert fixed["expected_windows"] == [{"benchmark_type": "sa-bench", "concurrency": 2}]
    assert "run_time_windows" not in fixed


def test_without_telemetry_nothing_is_planned_and_the_default_exporter_stays(
    make_recipe: RecipeFactory,
) -> None:
    plan = _plan(make_recipe(roles=DISAGG, frontend={"type": "dynamo"}, benchmark=BENCH))
    assert [s.name for s in plan.finalize] == ["validity"]  # the verdict, never power
    assert not any(p.name.startswith(("power", "cpu-power")) for p in plan.processes)
    dcgm = [p for p in plan.processes if p.role == "dcgm-exporter"]
    assert dcgm and dcgm[0].implied_by == "observability.tachometer default exporters"
    # the benchmark still stamps its windows, for the metrics scraper (test_scrape_windows_plan)
    windows = _by_name(plan)["benchmark"].env["SRT_MEASUREMENT_WINDOW_DIR"]
    assert windows == "/logs/telemetry/windows"


def test_cpu_only_telemetry_keeps_tachometers_dcgm_exporter(make_recipe: RecipeFactory) -> None:
    recipe = make_recipe(
        roles=DISAGG,
        frontend={"type": "dynamo"},
        benchmark=BENCH,
        telemetry={"enabled": True, "cpu_power": {"enabled": True}},
    )
    plan = _plan(recipe)
    dcgm = [p for p in plan.processes if p.role == "dcgm-exporter"]
    assert [p.implied_by for p in dcgm] == ["observability.tachometer default exporters"] * 2
    assert "power-collector" not in _by_name(plan)
    assert [s.name for s in plan.finalize] == ["cpu-power-finalize", "energy", "validity"]


def test_the_power_exporter_is_planned_with_tachometer_off(make_recipe: RecipeFactory) -> None:
    recipe = make_recipe(
        roles=DISAGG,
        frontend={"type": "dynamo"},
        observability={"tachometer": {"enabled": False}},
        telemetry={"enabled": True, "dcgm_exporter": GPU},
    )
    plan = _plan(recipe)
    dcgm = [p for p in plan.processes if p.role == "dcgm-exporter"]
    assert [p.implied_by for p in dcgm] == ["telemetry.dcgm_exporter"] * 2
    assert "tachometer" not in _by_name(plan)


def test_on_one_host_simulated_nodes_share_one_exporter_and_collector(
    make_recipe: RecipeFactory,
) -> None:
    recipe = make_recipe(
        model={"container": "none"},
        roles=DISAGG,
        frontend={"type": "dynamo"},
        telemetry={
            "enabled": True,
            "dcgm_exporter": {"container_image": "", "binary": "dcgm-exporter", "port": 9401},
            "cpu_power_exporter": {"port": 9405},
            "cpu_power": {"enabled": True},
        },
    )
    plan = _plan(recipe, LOCAL)
    names = set(_by_name(plan))
    assert {"cpu-power-exporter_node-01", "cpu-power_node-01"} <= names
    assert not {"cpu-power-exporter_node-02", "cpu-power_node-02"} & names
    config = _file(plan, "power.json")
    assert [e["hostname"] for e in config["endpoints"]] == ["node-01"]
    # Both simulated nodes' GPUs 0-7 are this machine's GPUs 0-7, used by both workers.
    assert len(config["expected_devices"]) == 8
    assert {a["worker_role"] for a in config["expected_devices"][0]["assignments"]} == {
        "prefill",
        "decode",
    }


def _telemetry_corpus() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for folder in ("v2", "v1"):
        for path in sorted((CORPUS / folder).rglob("*.yaml")):
            text = path.read_text()
            if "\ntelemetry:" not in f"\n{text}":
                continue
            try:
                text = migrate_text(text, file=path.name).text
            except SchemaError:
                continue
            out.append((f"{folder}/{path.relative_to(CORPUS / folder)}", text))
    return out


@pytest.mark.corpus
def test_every_public_recipe_with_telemetry_that_loads_plans_its_power_legs() -> None:
    if not (CORPUS / "v2").is_dir():
        pytest.skip(f"recipe corpus not found at {CORPUS}; set SRT_CORPUS")
    planned: list[str] = []
    for label, text in _telemetry_corpus():
        try:
            jobs = load_recipe_text(text, file=label, cluster=CLUSTER)
        except SchemaError:
            continue  # refused at validate: its message is the loader tests' business
        for job in jobs:
            if not job.recipe.telemetry.enabled:
                continue
            try:
                plan = _plan(job.recipe)
            except PlannerError as exc:
                pytest.fail(f"{job.label}: {exc}")
            names = set(_by_name(plan))
            assert "power-collector" in names or "cpu-power-init" in names, job.label
            assert plan.finalize, job.label
            planned.append(job.label)
    # power-noprof (migrated from its half-v1 form) is the corpus's loadable power recipe.
    assert any("power-noprof" in label for label in planned), planned
