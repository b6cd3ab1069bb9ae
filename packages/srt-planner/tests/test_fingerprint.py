"""The worker fingerprint capture in the step preamble, and the identity the runtime checks
(docs/planner.md#worker-environment, #container-preparation;
docs/telemetry-and-bench.md#identity-and-fingerprints)."""

from __future__ import annotations

from planner_testkit import RecipeFactory

from srt_planner import JobPlan, plan_job
from srt_planner.plan import ProcessSpec
from srt_schema.cluster import ClusterConfig
from srt_schema.recipe import IdentityConfig, IdentityModelConfig


def _workers(plan: JobPlan) -> dict[str, ProcessSpec]:
    return {spec.name: spec for spec in plan.processes if spec.kind == "worker"}


def _capture(python: str, log_dir: str, name: str, model: str | None) -> str:
    argv = f"{python} {log_dir}/srt_fingerprint.py {log_dir}/{name}" + (
        f" {model}" if model else ""
    )
    return (
        f'{{ [ "${{SLURM_PROCID:-0}}" != 0 ] || timeout 60 {argv} '
        "|| echo 'srt: fingerprint capture failed (ignored)' >&2; }"
    )


def test_only_the_leader_of_a_multi_node_worker_captures_after_setup_and_install(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(roles={"agg": {"nodes": 2, "workers": 1}}, setup_script="fix.sh")
    plan = plan_job(recipe, cluster, "n[0-1]", "7")
    leader, follower = _workers(plan)["agg_0_n0"], _workers(plan)["agg_0_n1"]
    capture = _capture("python3", "/logs", "fingerprint_agg_w0.json", "/model")
    assert leader.preamble[0].startswith("if [ -f /configs/fix.sh ]")
    assert "srt_dynamo_install" in leader.preamble[-2]
    assert leader.preamble[-1] == capture
    assert capture not in follower.preamble
    # The preamble is inside the srun command the Slurm launcher runs.
    assert capture in leader.srun_argv[-1]
    assert plan.fingerprint_script == "srt_fingerprint.py"


def test_every_disaggregated_worker_writes_its_own_file(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(
        roles={"prefill": {"nodes": 1, "workers": 2}, "decode": {"nodes": 1, "workers": 1}},
        resources={"gpus_per_node": 8},
    )
    plan = plan_job(recipe, cluster, "n[0-1]", "7")
    files = sorted(
        line.split("/logs/")[2].split()[0]
        for spec in _workers(plan).values()
        for line in spec.preamble
        if "srt_fingerprint.py" in line
    )
    assert files == [
        "fingerprint_decode_w0.json",
        "fingerprint_prefill_w0.json",
        "fingerprint_prefill_w1.json",
    ]


def test_local_mocker_with_a_hub_model_captures_with_the_runtime_python_and_no_model_dir(
    make_recipe: RecipeFactory,
) -> None:
    cluster = ClusterConfig(container_runtime="none", launcher="local", runtime_python="/opt/venv")
    recipe = make_recipe(
        model={"path": "hf:Qwen/Qwen3-0.6B"},
        engine={"type": "mocker"},
        frontend={"enable_multiple_frontends": False},
    )
    plan = plan_job(recipe, cluster, "localhost", "1", log_dir="/out/1/logs")
    worker = _workers(plan)["agg_0_localhost"]
    assert worker.preamble == (
        _capture("/opt/venv/bin/python", "/out/1/logs", "fingerprint_agg_w0.json", None),
    )


def test_an_mpi_endpoint_captures_once_on_task_zero(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(
        engine="trtllm",
        roles={"prefill": {"nodes": 2, "workers": 1}, "decode": {"nodes": 1, "workers": 1}},
        resources={"gpus_per_node": 4},
    )
    plan = plan_job(recipe, cluster, "n[0-2]", "3")
    prefill = next(s for s in _workers(plan).values() if s.role == "prefill")
    assert len(prefill.nodes) == 2  # one srun step over both nodes, every rank runs the preamble
    captures = [line for line in prefill.preamble if "srt_fingerprint.py" in line]
    assert captures == [_capture("python3", "/logs", "fingerprint_prefill_w0.json", "/model")]


def test_vllm_shadow_engines_do_not_capture(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(
        engine={"type": "vllm", "failover": {"shared_dir": "/dev/shm"}},
        roles={"agg": {"nodes": 1, "workers": 1, "gpus": 2}},
    )
    plan = plan_job(recipe, cluster, "n0", "77")
    serving, shadow = _workers(plan)["agg_0_n0"], _workers(plan)["agg_0_n0_e1"]
    assert any("fingerprint_agg_w0.json" in line for line in serving.preamble)
    assert not any("srt_fingerprint.py" in line for line in shadow.preamble)
    # The failover mkdir stays last, after the capture (docs/planner.md#container-preparation
    # preamble order).
    assert serving.preamble[-1].startswith("mkdir -p ")
    assert "srt_fingerprint.py" in serving.preamble[-2]


def test_identity_is_carried_into_the_plan_only_when_declared(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    assert plan_job(make_recipe(), cluster, "n0", "1").identity is None
    recipe = make_recipe(
        identity={"model": {"repo": "Qwen/Qwen3-32B"}, "frameworks": {"sglang": "0.5.1"}}
    )
    assert plan_job(recipe, cluster, "n0", "1").identity == IdentityConfig(
        model=IdentityModelConfig(repo="Qwen/Qwen3-32B"), frameworks={"sglang": "0.5.1"}
    )


def test_a_plan_without_workers_names_no_capture_script(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(
        roles={},
        frontend={"type": "none"},
        services=[{"name": "train", "command": ["torchrun"], "nodes": 1, "terminal": True}],
    )
    plan = plan_job(recipe, cluster, "n0", "1")
    assert not _workers(plan)
    assert plan.fingerprint_script is None
