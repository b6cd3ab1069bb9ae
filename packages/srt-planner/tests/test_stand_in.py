"""Stand-in engines (srt_planner.stand_in): the recipe's plan with only the engines replaced."""

from __future__ import annotations

import json

import msgspec
import pytest
from planner_testkit import RecipeFactory

from srt_planner import JobPlan, PlanningError, plan_job
from srt_planner.plan import ProcessSpec, StandIn
from srt_planner.stand_in import STAND_IN_MODULE, stand_in_model_files
from srt_schema.cluster import ClusterConfig

MODEL = "/out/.stand-in-model"
STAND_IN = StandIn(model=MODEL)
DISAGG = {
    "prefill": {"nodes": 1, "workers": 1, "gpus": 4},
    "decode": {"nodes": 1, "workers": 1, "gpus": 4},
}


@pytest.fixture
def none_cluster() -> ClusterConfig:
    return ClusterConfig(container_runtime="none", runtime_python="/venv/bin/python")


def _workers(plan: JobPlan) -> list[ProcessSpec]:
    return [spec for spec in plan.processes if spec.kind == "worker"]


def _flag(argv: tuple[str, ...], name: str) -> str:
    return argv[argv.index(name) + 1]


def _both(recipe: object, cluster: ClusterConfig, nodes: str) -> tuple[JobPlan, JobPlan]:
    real = plan_job(recipe, cluster, nodes, "7")  # type: ignore[arg-type]
    stood = plan_job(recipe, cluster, nodes, "7", stand_in=STAND_IN)  # type: ignore[arg-type]
    return real, stood


def test_everything_but_the_engines_is_the_recipes_plan(
    make_recipe: RecipeFactory, none_cluster: ClusterConfig
) -> None:
    recipe = make_recipe(roles=DISAGG, frontend={"type": "sglang-router"})
    real, stood = _both(recipe, none_cluster, "n[0-1]")
    assert stood.stand_in == STAND_IN and real.stand_in is None
    others = [p for p in real.processes if p.kind != "worker"]
    assert [p for p in stood.processes if p.kind != "worker"] == others
    assert stood.health == real.health and stood.frontend_url == real.frontend_url
    assert stood.served_model_name == real.served_model_name
    for before, after in zip(_workers(real), _workers(stood), strict=True):
        assert after.stand_in_for == before.argv
        # same name, node, GPUs, ports and environment (the GPU indices included)
        same = ("name", "nodes", "gpus", "ports", "env", "phase", "log_file", "restart")
        assert {k: getattr(after, k) for k in same} == {k: getattr(before, k) for k in same}
        assert after.env.get("CUDA_VISIBLE_DEVICES") == before.env.get("CUDA_VISIBLE_DEVICES")


def test_router_workers_become_the_stand_in_server_on_their_ports(
    make_recipe: RecipeFactory, none_cluster: ClusterConfig
) -> None:
    recipe = make_recipe(roles=DISAGG, frontend={"type": "sglang-router"})
    prefill, decode = _workers(plan_job(recipe, none_cluster, "n[0-1]", "7", stand_in=STAND_IN))
    assert prefill.argv[:3] == ("/venv/bin/python", "-m", STAND_IN_MODULE)
    assert _flag(prefill.argv, "--port") == str(prefill.ports["http"])
    assert _flag(prefill.argv, "--role") == "prefill" and _flag(decode.argv, "--role") == "decode"
    assert _flag(prefill.argv, "--engine") == "sglang"
    assert _flag(prefill.argv, "--model-path") == MODEL
    binds = {b for i, b in enumerate(prefill.argv) if i and prefill.argv[i - 1] == "--bind"}
    assert f"bootstrap={prefill.ports['bootstrap']}" in binds
    assert not any(b.startswith("http=") for b in binds)


def test_a_direct_worker_stands_in_on_the_public_port(
    make_recipe: RecipeFactory, none_cluster: ClusterConfig
) -> None:
    recipe = make_recipe(frontend={"type": "sglang", "enable_multiple_frontends": False})
    (worker,) = _workers(plan_job(recipe, none_cluster, "n0", "7", stand_in=STAND_IN))
    assert _flag(worker.argv, "--port") == str(worker.ports["public"])
    assert f"http={worker.ports['http']}" in worker.argv


def test_dynamo_workers_become_mockers_registered_where_the_engine_registers(
    make_recipe: RecipeFactory, none_cluster: ClusterConfig
) -> None:
    recipe = make_recipe(roles=DISAGG, engine="vllm", dynamo={"request_plane": "tcp"})
    prefill, decode = _workers(plan_job(recipe, none_cluster, "n[0-1]", "7", stand_in=STAND_IN))
    assert prefill.argv[1:3] == ("-m", "dynamo.mocker")
    assert _flag(prefill.argv, "--endpoint") == "dyn://dynamo.prefill.generate"
    assert _flag(decode.argv, "--endpoint") == "dyn://dynamo.backend.generate"
    assert _flag(prefill.argv, "--disaggregation-mode") == "prefill"
    assert _flag(prefill.argv, "--engine-type") == "vllm"
    assert _flag(prefill.argv, "--model-path") == MODEL
    assert _flag(prefill.argv, "--model-name") == "qwen3"
    assert _flag(prefill.argv, "--request-plane") == "tcp"
    assert prefill.env["DYN_SYSTEM_PORT"] == str(prefill.ports["sys"])


def test_an_explicit_dynamo_endpoint_is_kept(
    make_recipe: RecipeFactory, none_cluster: ClusterConfig
) -> None:
    roles = {"agg": {"nodes": 1, "workers": 1, "args": {"endpoint": "dyn://ns.worker.generate"}}}
    recipe = make_recipe(roles=roles)
    (worker,) = _workers(plan_job(recipe, none_cluster, "n0", "7", stand_in=STAND_IN))
    assert _flag(worker.argv, "--endpoint") == "dyn://ns.worker.generate"


def test_follower_ranks_wait_and_mpi_endpoints_run_one_process_per_node(
    make_recipe: RecipeFactory, none_cluster: ClusterConfig
) -> None:
    roles = {"agg": {"nodes": 2, "workers": 1, "gpus": 16}}
    sglang = plan_job(make_recipe(roles=roles), none_cluster, "n[0-1]", "7", stand_in=STAND_IN)
    leader, follower = _workers(sglang)
    assert leader.argv[1:3] == ("-m", "dynamo.mocker") and follower.argv == ("sleep", "infinity")
    trtllm = plan_job(
        make_recipe(roles=roles, engine="trtllm"), none_cluster, "n[0-1]", "7", stand_in=STAND_IN
    )
    assert [w.nodes for w in _workers(trtllm)] == [("n0",), ("n1",)]


def test_a_mocker_keeps_its_flags_and_loads_the_stand_in_model(
    make_recipe: RecipeFactory, none_cluster: ClusterConfig
) -> None:
    recipe = make_recipe(engine={"type": "mocker", "speedup_ratio": 7})
    real, stood = _both(recipe, none_cluster, "n0")
    (before,), (after,) = _workers(real), _workers(stood)
    assert _flag(after.argv, "--model-path") == MODEL
    assert _flag(after.argv, "--speedup-ratio") == _flag(before.argv, "--speedup-ratio")
    assert after.stand_in_for == before.argv


@pytest.mark.parametrize("frontend", ["atomesh", "tilert-router"])
def test_a_frontend_that_cannot_be_installed_here_is_refused(
    make_recipe: RecipeFactory, none_cluster: ClusterConfig, frontend: str
) -> None:
    roles = {name: dict(role) for name, role in DISAGG.items()}
    if frontend == "atomesh":
        recipe = make_recipe(roles=roles, engine="atom", frontend={"type": frontend})
    else:
        roles["prefill"]["engine"] = "vllm"
        roles["decode"]["engine"] = "tilert"
        recipe = make_recipe(roles=roles, frontend={"type": frontend})
    plan_job(recipe, none_cluster, "n[0-1]", "7")  # plans without stand-ins
    with pytest.raises(PlanningError, match=rf"\$\.frontend\.type: {frontend} cannot run"):
        plan_job(recipe, none_cluster, "n[0-1]", "7", stand_in=STAND_IN)


def test_trtllm_serve_runs_aggregated_and_is_refused_disaggregated(
    make_recipe: RecipeFactory, none_cluster: ClusterConfig
) -> None:
    agg = make_recipe(engine="trtllm", frontend={"type": "trtllm_serve"})
    (worker,) = _workers(plan_job(agg, none_cluster, "n0", "7", stand_in=STAND_IN))
    assert worker.argv[2] == STAND_IN_MODULE
    disagg = make_recipe(roles=DISAGG, engine="trtllm", frontend={"type": "trtllm_serve"})
    with pytest.raises(PlanningError, match="TensorRT-LLM"):
        plan_job(disagg, none_cluster, "n[0-1]", "7", stand_in=STAND_IN)


def test_the_plan_round_trips_and_the_stand_in_model_is_deterministic(
    make_recipe: RecipeFactory, none_cluster: ClusterConfig
) -> None:
    plan = plan_job(make_recipe(), none_cluster, "n0", "7", stand_in=STAND_IN)
    assert msgspec.json.decode(msgspec.json.encode(plan), type=JobPlan) == plan
    files = stand_in_model_files()
    assert files == stand_in_model_files()
    vocab = json.loads(files["tokenizer.json"])["model"]["vocab"]
    assert vocab["w0"] == 3 and len(vocab) == 2003
    assert json.loads(files["tokenizer_config.json"])["eos_token"] == "</s>"


def test_vllm_data_parallel_processes_behind_dynamo_each_register_a_mocker(
    make_recipe: RecipeFactory, none_cluster: ClusterConfig
) -> None:
    args = {"data-parallel-size": 16, "tensor-parallel-size": 1}
    roles = {"agg": {"nodes": 2, "workers": 1, "gpus": 16, "args": args}}
    plan = plan_job(
        make_recipe(engine="vllm", roles=roles), none_cluster, "n[0-1]", "7", stand_in=STAND_IN
    )
    workers = _workers(plan)
    assert [w.argv[1:3] for w in workers] == [("-m", "dynamo.mocker")] * 2
    assert plan.health.expected_decode == 2  # one instance per process, as the engine registers
