"""Dynamo sidecar mode (docs/planner.md#ports, #worker-environment, #sglang): SGLang engine +
sidecar."""

from __future__ import annotations

import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from planner_testkit import RecipeFactory

from srt_planner import JobPlan, PlanningError, plan_job
from srt_planner.engines.sidecar import coupled_launch
from srt_planner.plan import ProcessSpec
from srt_schema.cluster import ClusterConfig

TWO_NODE = {"agg": {"nodes": 2, "workers": 1, "gpus": 16, "sidecar": True}}


def _workers(plan: JobPlan) -> list[ProcessSpec]:
    return [spec for spec in plan.processes if spec.kind == "worker"]


def test_sglang_leader_runs_engine_and_sidecar_in_one_step(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(
        roles=TWO_NODE,
        dynamo={"sidecar_port": 51000, "sidecar_args": ["--grpc-connections", "4"]},
    )
    leader, follower = _workers(plan_job(recipe, cluster, "n[0-1]", "1"))
    assert leader.ports["sidecar_grpc"] == 51000
    assert leader.argv[:2] == ("bash", "-c")
    script = leader.argv[2]
    engine = next(line for line in script.splitlines() if "sglang.launch_server" in line)
    sidecar = next(line for line in script.splitlines() if ".sidecar " in line)
    engine_argv = shlex.split(engine.removesuffix(" &"))
    assert engine_argv[:3] == ["python3", "-m", "sglang.launch_server"]
    assert engine_argv[engine_argv.index("--grpc-port") + 1] == "51000"
    assert "--incremental-streaming-output" in engine_argv
    # dynamo.sglang's own flags: SGLang's server (every catalogued version) refuses them
    assert "--request-plane" not in engine_argv
    assert "--dump-config-to" not in engine_argv
    assert shlex.split(sidecar.removesuffix(" &")) == [
        "python3",
        "-m",
        "dynamo.sglang.sidecar",
        "--grpc-endpoint",
        "127.0.0.1:51000",
        "--grpc-connections",
        "4",
    ]
    assert "deadline=$((SECONDS + 3600))" in script
    # The follower is an engine-only rank: no gRPC port, no sidecar, same streaming mode.
    assert "sidecar_grpc" not in follower.ports
    assert follower.argv[:3] == ("python3", "-m", "sglang.launch_server")
    assert "--grpc-port" not in follower.argv
    assert "--incremental-streaming-output" in follower.argv
    assert "--dump-config-to" not in follower.argv
    for spec in (leader, follower):
        assert spec.env["SGLANG_RUST_BUILD_MODE"] == "never"
        assert spec.env["DYN_SYSTEM_PORT"] == str(spec.ports["sys"])


def test_sidecar_ports_per_process_and_overrides(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(
        roles={
            "agg": {
                "nodes": 1,
                "workers": 2,
                "gpus": 4,
                "sidecar": True,
                "env": {"SGLANG_RUST_BUILD_MODE": "always"},
                "args": {"incremental-streaming-output": False, "grpc-port": 1},
            }
        },
        dynamo={"sidecar_binary": "/opt/dynamo-sglang-sidecar"},
    )
    first, second = _workers(plan_job(recipe, cluster, "n0", "1"))
    assert (first.ports["sidecar_grpc"], second.ports["sidecar_grpc"]) == (50051, 50052)
    assert "/opt/dynamo-sglang-sidecar --grpc-endpoint 127.0.0.1:50052 &" in second.argv[2]
    assert "--incremental-streaming-output" not in second.argv[2]
    assert "--grpc-port 1 " not in second.argv[2]
    assert second.env["SGLANG_RUST_BUILD_MODE"] == "always"
    assert second.env["CUDA_VISIBLE_DEVICES"] == "4,5,6,7"


def test_dynamo_sidecar_switch_is_job_wide(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(dynamo={"sidecar": True})
    (worker,) = _workers(plan_job(recipe, cluster, "n0", "1"))
    assert worker.ports["sidecar_grpc"] == 50051
    assert "dynamo.sglang.sidecar" in worker.argv[2]


def test_sidecar_for_other_engines_is_refused(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    # vLLM and TRT-LLM sidecars: test_sidecar_engines.py.
    recipe = make_recipe(engine="atom", roles={"agg": {"nodes": 1, "workers": 1, "sidecar": True}})
    with pytest.raises(PlanningError) as info:
        plan_job(recipe, cluster, "n0", "1")
    assert str(info.value) == (
        "$.roles.agg.sidecar: the Dynamo sidecar mode is planned for sglang, vllm and trtllm, "
        "not atom; remove 'sidecar: true' (and dynamo.sidecar)"
    )


# --- the coupled launch script, run for real with bash and two small Python programs ---

_LISTEN = (
    "import socket, sys, time\n"
    "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
    "s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(); time.sleep(float(sys.argv[2]))\n"
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _run(argv: tuple[str, ...], timeout: float = 20.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)


def test_coupled_launch_stops_the_engine_when_the_sidecar_exits(tmp_path: Path) -> None:
    port = _free_port()
    marker = tmp_path / "sidecar-started"
    engine = (sys.executable, "-c", _LISTEN, str(port), "300")
    sidecar = ("bash", "-c", f"touch {shlex.quote(str(marker))}; exit 3")
    started = time.monotonic()
    result = _run(coupled_launch(engine, sidecar, grpc_port=port, startup_timeout=15))
    assert result.returncode == 3, result.stderr
    assert marker.exists()
    assert time.monotonic() - started < 60  # hang guard: the 300 s engine was stopped, not awaited
    assert "srt: engine or sidecar exited (status 3); stopping the other" in result.stderr


def test_coupled_launch_fails_when_the_engine_exits_before_its_port_opens() -> None:
    port = _free_port()
    result = _run(
        coupled_launch(
            (sys.executable, "-c", "raise SystemExit(0)"),
            ("bash", "-c", "echo sidecar ran"),
            grpc_port=port,
            startup_timeout=15,
        )
    )
    assert result.returncode == 1
    assert "sidecar ran" not in result.stdout
    assert f"srt: engine exited before its gRPC port {port} opened" in result.stderr


def test_coupled_launch_times_out_waiting_for_the_port() -> None:
    port = _free_port()
    result = _run(
        coupled_launch(
            (sys.executable, "-c", "import time; time.sleep(30)"),
            ("bash", "-c", "echo sidecar ran"),
            grpc_port=port,
            startup_timeout=1,
        )
    )
    assert result.returncode == 1
    assert "sidecar ran" not in result.stdout
    assert f"engine gRPC port {port} not open after 1s" in result.stderr
