"""Dynamo sidecar mode for vLLM and TRT-LLM (docs/planner.md#vllm, #trt-llm,
#worker-environment): the native engine and its sidecar in one step, what each is told, and the
refusals of layouts srt does not plan. SGLang's sidecar: test_sidecar.py."""

from __future__ import annotations

import os
import shlex
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from planner_testkit import RecipeFactory

from srt_planner import JobPlan, PlanningError, plan_job
from srt_planner.engines.sidecar import rank_zero_launch
from srt_planner.plan import ProcessSpec
from srt_schema.cluster import ClusterConfig


def _workers(plan: JobPlan) -> list[ProcessSpec]:
    return [spec for spec in plan.processes if spec.kind == "worker"]


def _lines(spec: ProcessSpec) -> tuple[list[str], list[str]]:
    """The engine and sidecar commands of a coupled launch, as words."""
    assert spec.argv[:2] == ("bash", "-c")
    script = spec.argv[2].splitlines()
    sidecar = next(line for line in script if ".sidecar " in line)
    engine = next(line for line in script if line.endswith(" &") and line != sidecar)
    return shlex.split(engine.removesuffix(" &")), shlex.split(sidecar.removesuffix(" &"))


def _vllm(make_recipe: RecipeFactory, roles: dict[str, object], **fields: object) -> JobPlan:
    recipe = make_recipe(engine="vllm", resources={"gpus_per_node": 4}, roles=roles, **fields)
    nodes = sum(int(str(r["nodes"])) for r in roles.values() if isinstance(r, dict))
    cluster = ClusterConfig(default_account="acct", default_partition="batch")
    return plan_job(recipe, cluster, [f"n{i}" for i in range(nodes)], "1")


def test_vllm_runs_the_native_server_and_the_sidecar_in_one_step(
    make_recipe: RecipeFactory,
) -> None:
    agg = {"nodes": 1, "workers": 2, "gpus": 2, "sidecar": True, "args": {"max-model-len": 64}}
    plan = _vllm(make_recipe, {"agg": agg}, dynamo={"sidecar_args": ["--grpc-connections", "4"]})
    first, second = _workers(plan)
    engine, sidecar = _lines(second)
    assert engine[:5] == ["python3", "-m", "vllm.entrypoints.cli.main", "serve", "/model"]
    assert engine[engine.index("--host") + 1] == "127.0.0.1"
    assert engine[engine.index("--port") + 1] == str(second.ports["http"])
    assert engine[engine.index("--grpc-port") + 1] == str(second.ports["sidecar_grpc"]) == "50052"
    # dynamo.vllm's own flags are not the native server's; the GPU mask replaces --device-ids.
    for flag in ("--request-plane", "--dump-config-to", "--device-ids", "--disaggregation-mode"):
        assert flag not in engine
    assert sidecar == [
        "python3",
        "-m",
        "dynamo.vllm.sidecar",
        "--grpc-endpoint",
        "127.0.0.1:50052",
        "--grpc-connections",
        "4",
    ]
    assert (first.env["CUDA_VISIBLE_DEVICES"], second.env["CUDA_VISIBLE_DEVICES"]) == ("0,1", "2,3")
    assert second.env["VLLM_USE_RUST_FRONTEND"] == "1"
    assert second.env["VLLM_PLUGINS"] == ""


def test_vllm_sidecar_env_defaults_yield_to_the_recipe(make_recipe: RecipeFactory) -> None:
    agg = {"nodes": 1, "workers": 1, "sidecar": True, "env": {"VLLM_PLUGINS": "mine"}}
    (worker,) = _workers(_vllm(make_recipe, {"agg": agg}))
    assert worker.env["VLLM_PLUGINS"] == "mine"
    assert worker.env["VLLM_USE_RUST_FRONTEND"] == "1"


def test_vllm_disaggregated_sidecars_are_told_their_role(make_recipe: RecipeFactory) -> None:
    roles = {
        "prefill": {"nodes": 1, "workers": 1, "sidecar": True},
        "decode": {"nodes": 1, "workers": 1, "sidecar": True},
    }
    prefill, decode = _workers(_vllm(make_recipe, roles))
    for spec, role in ((prefill, "prefill"), (decode, "decode")):
        engine, sidecar = _lines(spec)
        assert "--disaggregation-mode" not in engine
        assert "--kv-transfer-config" in engine
        assert sidecar[-2:] == ["--disaggregation-mode", role]


def test_vllm_multi_node_worker_has_one_sidecar_on_its_leader(make_recipe: RecipeFactory) -> None:
    agg = {"nodes": 2, "workers": 1, "gpus": 8, "sidecar": True}
    agg["args"] = {"tensor-parallel-size": 8}
    leader, follower = _workers(_vllm(make_recipe, {"agg": agg}))
    engine, _ = _lines(leader)
    assert engine[engine.index("--node-rank") + 1] == "0"
    assert "sidecar_grpc" not in follower.ports
    assert follower.argv[:4] == ("python3", "-m", "vllm.entrypoints.cli.main", "serve")
    assert "--headless" in follower.argv
    assert "--grpc-port" not in follower.argv and "--port" not in follower.argv


@pytest.mark.parametrize(
    ("engine", "agg", "message"),
    [
        (
            "vllm",
            {"nodes": 2, "workers": 1, "gpus": 8, "args": {"data-parallel-size": 8}},
            "$.roles.agg.sidecar: a vLLM data-parallel worker across 2 nodes is not planned "
            "with the Dynamo sidecar (only its leader runs one); use workers of one node each "
            "(more workers, fewer GPUs) or remove 'sidecar: true'",
        ),
        (
            {"type": "vllm", "dp_launch_mode": "per_gpu"},
            {"nodes": 1, "workers": 1, "args": {"data-parallel-size": 4}},
            "$.roles.agg.sidecar: the Dynamo sidecar mode with vLLM needs "
            "engine.dp_launch_mode per_node (one native server per worker); set "
            "dp_launch_mode: per_node or remove 'sidecar: true'",
        ),
    ],
)
def test_vllm_sidecar_layouts_srt_does_not_plan_are_refused(
    make_recipe: RecipeFactory, engine: object, agg: dict[str, object], message: str
) -> None:
    recipe = make_recipe(
        engine=engine, resources={"gpus_per_node": 4}, roles={"agg": {**agg, "sidecar": True}}
    )
    cluster = ClusterConfig(default_account="acct", default_partition="batch")
    with pytest.raises(PlanningError) as info:
        plan_job(recipe, cluster, ["n0", "n1"], "1")
    assert str(info.value) == message


def _trtllm(make_recipe: RecipeFactory, **dynamo: object) -> ProcessSpec:
    recipe = make_recipe(
        engine={"type": "trtllm", "served_model_name": "org/m"},
        resources={"gpus_per_node": 4},
        roles={"agg": {"nodes": 2, "workers": 1, "args": {"tensor_parallel_size": 8}}},
        dynamo={"sidecar": True, **dynamo},
    )
    cluster = ClusterConfig(default_account="acct", default_partition="batch")
    (worker,) = _workers(plan_job(recipe, cluster, ["n0", "n1"], "1"))
    return worker


def test_trtllm_rank_zero_runs_the_pair_and_every_other_rank_the_engine(
    make_recipe: RecipeFactory,
) -> None:
    worker = _trtllm(make_recipe, sidecar_context_length=8192, sidecar_port=52000)
    assert worker.nodes == ("n0", "n1")  # one MPI step over the endpoint
    script = worker.argv[2].splitlines()
    guard = script[0]
    engine = [
        "trtllm-llmapi-launch",
        "python3",
        "-m",
        "tensorrt_llm.commands.serve",
        "/model",
        "--grpc",
        "--host",
        "127.0.0.1",
        "--port",
        "52000",
        "--extra_llm_api_options",
        "/logs/trtllm_config_agg.yaml",
        "--served_model_name",
        "org/m",
    ]
    assert guard == f'if [ "${{SLURM_PROCID:-0}}" != 0 ]; then exec {shlex.join(engine)}; fi'
    pair_engine, sidecar = _lines(worker)
    assert pair_engine == engine
    assert sidecar == [
        "python3",
        "-m",
        "dynamo.trtllm.sidecar",
        "--grpc-endpoint",
        "127.0.0.1:52000",
        "--model-path",
        "/model",
        "--context-length",
        "8192",
    ]


def test_trtllm_sidecar_without_a_context_length_lets_the_sidecar_ask_the_engine(
    make_recipe: RecipeFactory,
) -> None:
    _, sidecar = _lines(_trtllm(make_recipe))
    assert "--context-length" not in sidecar
    assert sidecar[-2:] == ["--model-path", "/model"]


# --- rank_zero_launch, run for real with bash --------------------------------------------------

_LISTEN = (
    "import socket, sys, time\n"
    "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
    "s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(); time.sleep(30)\n"
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run_as_rank(argv: tuple[str, ...], rank: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SLURM_PROCID": rank}
    return subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False, env=env)


def test_rank_zero_launch_starts_the_sidecar_on_rank_zero_only(tmp_path: Path) -> None:
    port = _free_port()
    marker = tmp_path / "sidecar-ran"
    sidecar = ("bash", "-c", f"touch {shlex.quote(str(marker))}; exit 4")
    worker_rank = tmp_path / "rank-engine"
    worker_rank.write_text('#!/bin/sh\necho engine-rank "$SLURM_PROCID"\n')
    worker_rank.chmod(worker_rank.stat().st_mode | stat.S_IXUSR)

    other = _run_as_rank(
        rank_zero_launch((str(worker_rank),), sidecar, grpc_port=port, startup_timeout=5), "3"
    )
    assert (other.returncode, other.stdout) == (0, "engine-rank 3\n")
    assert not marker.exists()

    engine = (sys.executable, "-c", _LISTEN, str(port))
    zero = _run_as_rank(rank_zero_launch(engine, sidecar, grpc_port=port, startup_timeout=15), "0")
    assert zero.returncode == 4, zero.stderr
    assert marker.exists()
    assert "srt: engine or sidecar exited (status 4); stopping the other" in zero.stderr
