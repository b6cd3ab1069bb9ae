"""Profiling in the plan (srt_planner.profiling, srt_planner.nsys): what the benchmark is told to
send to which worker, how the workers are wrapped, and the ``profiles`` finalize step."""

from __future__ import annotations

import json
import shlex
from typing import Any

from planner_testkit import RecipeFactory

from srt_planner import plan_allocation, plan_job
from srt_planner.plan import JobPlan, StandIn
from srt_schema.cluster import ClusterConfig

CLUSTER = ClusterConfig(default_account="a", default_partition="p")
DISAGG = {"prefill": {"nodes": 1, "workers": 2}, "decode": {"nodes": 1, "workers": 1}}
BENCH = {"type": "sa-bench", "isl": 8, "osl": 8, "concurrencies": [2]}


def _plan(recipe: Any) -> JobPlan:
    request = plan_allocation(recipe, CLUSTER, runner_name=None)
    nodes = [f"node-{i:02d}" for i in range(1, request.nodes + 1)]
    return plan_job(recipe, CLUSTER, nodes, "77")


def _bench(plan: JobPlan) -> dict[str, Any]:
    (content,) = [f.content for f in plan.files if f.path == "bench.json"]
    out: dict[str, Any] = json.loads(content)
    return out


def test_disaggregated_windows_go_to_each_phase_s_dynamo_workers(
    make_recipe: RecipeFactory,
) -> None:
    recipe = make_recipe(
        roles=DISAGG,
        frontend={"type": "dynamo"},
        benchmark=BENCH,
        profiling={
            "type": "torch",
            "prefill": {"start_step": 3, "stop_step": 7},
            "decode": {"start_step": 10, "stop_step": 30},
        },
    )
    plan = _plan(recipe)
    targets = _bench(plan)["profiling"]["targets"]
    assert [(t["role"], t["worker"]) for t in targets] == [
        ("prefill", "prefill_w0"),
        ("prefill", "prefill_w1"),
        ("decode", "decode_w0"),
    ]
    sys_ports = {p.name: p.ports["sys"] for p in plan.processes if p.kind == "worker"}
    for t in targets:
        # Dynamo workers take the requests on their system port, under /engine
        assert (t["start_path"], t["stop_path"]) == (
            "/engine/start_profile",
            "/engine/stop_profile",
        )
        assert int(t["url"].rsplit(":", 1)[1]) in sys_ports.values()
    assert targets[0]["start_body"] == {
        "output_dir": "/logs/profiles/prefill",
        "start_step": 3,
        "num_steps": 4,
        "activities": ["CPU", "GPU"],
    }
    assert targets[2]["start_body"]["start_step"] == 10
    assert targets[2]["start_body"]["num_steps"] == 20
    [step] = [s for s in plan.finalize if s.name == "profiles"]
    assert step.name == "profiles" and step.stop_first == ()
    assert step.argv[-4:] == ("--expect-dir", "decode", "--expect-dir", "prefill")


def test_selected_scope_sends_to_one_worker_and_native_sglang_uses_its_http_port(
    make_recipe: RecipeFactory,
) -> None:
    recipe = make_recipe(
        roles={"agg": {"nodes": 1, "workers": 2, "gpus": 4}},
        frontend={"type": "sglang-router", "enable_multiple_frontends": False},
        benchmark=BENCH,
        profiling={
            "type": "nsys",
            "aggregated": {"capture_scope": "selected", "worker_index": 1, "start_step": 0},
        },
    )
    plan = _plan(recipe)
    [target] = _bench(plan)["profiling"]["targets"]
    assert (target["worker"], target["start_path"]) == ("agg_w1", "/start_profile")
    assert target["start_body"]["activities"] == ["CUDA_PROFILER"]
    # an open window ends at the default 50 steps
    assert target["start_body"]["num_steps"] == 50
    workers = [p for p in plan.processes if p.kind == "worker"]
    wrapped = [w for w in workers if w.argv[:2] == ("nsys", "profile")]
    assert [w.index for w in wrapped] == [1]
    (w,) = wrapped
    assert w.profile is not None
    assert w.profile.nsys_report == "profiles/agg/node-01_agg_w1_profile_gpu4-5-6-7"
    assert w.stop_grace_seconds == 1800.0
    [step] = [s for s in plan.finalize if s.name == "profiles"]
    assert step.stop_first == (w.name,)
    assert "--expect-nsys" in step.argv and w.profile.nsys_report in step.argv


def test_trtllm_reads_its_window_from_env_and_gets_no_requests(
    make_recipe: RecipeFactory,
) -> None:
    recipe = make_recipe(
        engine="trtllm",
        frontend={"type": "dynamo"},
        benchmark=BENCH,
        profiling={"type": "nsys", "aggregated": {"start_step": 4, "stop_step": 8}},
    )
    plan = _plan(recipe)
    assert "profiling" not in _bench(plan)
    (worker,) = [p for p in plan.processes if p.kind == "worker"]
    assert worker.env["TLLM_PROFILE_START_STOP"] == "4-8"
    [step] = [s for s in plan.finalize if s.name == "profiles"]
    assert step.name == "profiles" and step.stop_first == (worker.name,)


def test_automatic_nsys_launches_a_session_the_markers_start_and_stop(
    make_recipe: RecipeFactory,
) -> None:
    recipe = make_recipe(
        frontend={"type": "dynamo"},
        benchmark=BENCH,
        observability={"enabled": True, "nsys": {"report_timeout_secs": 90}},
    )
    plan = _plan(recipe)
    control = _bench(plan)["profiling"]
    assert (control["targets"], control["marker_dir"]) == ([], "/logs/profiles/.control")
    (bench,) = [p for p in plan.processes if p.kind == "benchmark"]
    assert bench.env["SRT_PROFILE_MARKER_DIR"] == "/logs/profiles/.control"
    wrapped = [p for p in plan.processes if p.profile is not None]
    assert {p.kind for p in wrapped} == {"worker", "frontend"}
    for proc in wrapped:
        assert proc.argv[:2] == ("nsys", "launch")
        session = proc.argv[2].removeprefix("--session-new=")
        [watcher] = [line for line in proc.preamble if "measured_workload.start" in line]
        assert f"nsys start --session={session}" in watcher
        assert f"timeout 90 nsys stop --session={session}" in watcher
        assert proc.stop_grace_seconds == 90.0
        assert proc.profile is not None and proc.profile.type == "nsys-auto"
        # the watcher is valid shell
        assert shlex.split(watcher)
    [step] = [s for s in plan.finalize if s.name == "profiles"]
    assert set(step.stop_first) == {p.name for p in wrapped}


def test_stand_in_jobs_replace_nsys_with_the_stand_in_profiler(
    make_recipe: RecipeFactory,
) -> None:
    recipe = make_recipe(
        roles={"agg": {"nodes": 1, "workers": 1}},
        frontend={"type": "sglang-router", "enable_multiple_frontends": False},
        benchmark=BENCH,
        profiling={"type": "nsys-time", "delay_secs": 1, "duration_secs": 2, "aggregated": {}},
    )
    local = ClusterConfig(launcher="local")
    request = plan_allocation(recipe, local, runner_name=None)
    nodes = [f"node-{i:02d}" for i in range(1, request.nodes + 1)]
    plan = plan_job(recipe, local, nodes, "77", stand_in=StandIn(model="/tmp/stand-in-model"))
    (worker,) = [p for p in plan.processes if p.kind == "worker"]
    assert worker.argv[1:4] == ("-m", "srt_runtime.standin.nsys", "profile")
    assert worker.argv[worker.argv.index("--delay") :][:2] == ("--delay", "1")
    assert "srt_runtime.standin" in worker.argv[worker.argv.index("-o") + 2 :]


def test_a_timed_capture_wraps_every_worker_and_sets_the_benchmark_s_traffic_duration(
    make_recipe: RecipeFactory,
) -> None:
    recipe = make_recipe(
        roles=DISAGG,
        frontend={"type": "dynamo"},
        benchmark=BENCH,
        profiling={
            "type": "nsys-time",
            "delay_secs": 30,
            "duration_secs": 20,
            "benchmark_duration_secs": 90,
        },
    )
    plan = _plan(recipe)
    workers = [p for p in plan.processes if p.kind == "worker"]
    assert sorted(p.role for p in workers) == ["decode", "prefill", "prefill"]
    for w in workers:  # no phase block: every worker of both phases, with the window
        assert "--delay 30 --duration 20" in shlex.join(w.argv)
    profiling = _bench(plan)["profiling"]
    assert profiling["targets"] == []  # nothing to start or stop: the window is in the wrapper
    assert profiling["traffic_seconds"] == 90
    assert profiling["traffic_record"].endswith("/logs/profiles/traffic.json")
