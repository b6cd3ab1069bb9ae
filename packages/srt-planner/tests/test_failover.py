"""vLLM shadow-engine failover (docs/planner.md#ports, #worker-environment, #vllm, #services,
#health-gate, #failure-and-restart)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from planner_testkit import RecipeFactory

from srt_planner import JobPlan, PlanningError, plan_job
from srt_planner.engines.failover import gms_command
from srt_planner.env import render_placeholders
from srt_planner.plan import LogProbe, ProcessSpec
from srt_schema.cluster import ClusterConfig

HERE = Path(__file__).resolve().parent
FAILOVER: dict[str, Any] = {"type": "vllm", "failover": {}}
TWO_WORKERS = {"agg": {"nodes": 1, "workers": 2, "gpus": 2, "restart": {"policy": "always"}}}


def _by_name(plan: JobPlan) -> dict[str, ProcessSpec]:
    return {spec.name: spec for spec in plan.processes}


def _flag(argv: tuple[str, ...], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def test_every_worker_gets_a_shadow_engine_on_its_gpus(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    plan = plan_job(make_recipe(engine=FAILOVER, roles=TWO_WORKERS), cluster, "n0", "77")
    specs = _by_name(plan)
    workers = [spec.name for spec in plan.processes if spec.kind == "worker"]
    assert workers == ["agg_0_n0", "agg_0_n0_e1", "agg_1_n0", "agg_1_n0_e1"]
    serving, shadow = specs["agg_1_n0"], specs["agg_1_n0_e1"]
    assert (serving.engine, serving.shares_gpus_with) == (0, None)
    assert (shadow.engine, shadow.shares_gpus_with) == (1, "agg_1_n0")
    assert serving.gpus == shadow.gpus == (2, 3)
    assert shadow.log_file == "n0_agg_w1_e1.out"
    assert shadow.restart.policy == "always"
    # Own ports for every engine; the same mask (no --device-ids) for both.
    assert set(serving.ports.values()).isdisjoint(shadow.ports.values())
    for spec, engine in ((serving, "0"), (shadow, "1")):
        assert spec.env["CUDA_VISIBLE_DEVICES"] == "2,3"
        assert spec.env["ENGINE_ID"] == engine
        assert spec.env["GMS_SOCKET_DIR"] == "/dev/shm/srtctl-77/agg_1"
        assert spec.env["FAILOVER_LOCK_PATH"] == "/dev/shm/srtctl-77/agg_1/failover.lock"
        assert spec.env["DYN_SYSTEM_STARTING_HEALTH_STATUS"] == "notready"
        assert spec.env["DYN_SYSTEM_PORT"] == str(spec.ports["sys"])
        assert "--device-ids" not in spec.argv
        assert _flag(spec.argv, "--load-format") == "gms"
        assert "--gms-shadow-mode" in spec.argv
        assert spec.preamble[-1] == "mkdir -p /dev/shm/srtctl-77/agg_1"
    assert _flag(shadow.argv, "--dump-config-to") == "/logs/n0_agg_w1_config_e1.json"
    # Shadows are not counted by the health gate (docs/planner.md#health-gate).
    assert plan.health.expected_decode == 2


def test_gms_service_per_worker_before_the_engines(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(engine={"type": "vllm", "failover": {"shared_dir": "/scratch/"}})
    plan = plan_job(recipe, cluster, "n0", "5")
    specs = _by_name(plan)
    gms = specs["service_gms_agg_0_n0"]
    assert gms.phase == "before_workers"
    assert plan.processes.index(gms) < plan.processes.index(specs["agg_0_n0"])
    assert gms.implied_by == "engine.failover"
    assert gms.critical
    assert gms.env["GMS_SOCKET_DIR"] == "/scratch/srtctl-5/agg_0"
    assert "CUDA_VISIBLE_DEVICES" not in gms.env  # a full-node worker gets no mask
    assert gms.readiness == LogProbe(
        pattern="GMS ready:", timeout_seconds=120.0, interval_seconds=2.0
    )
    assert gms.argv[:2] == ("bash", "-c")
    assert "count=8\n" in gms.argv[2]
    assert [s.name for s in plan.processes if s.role == "gms"] == ["service_gms_agg_0_n0"]


def test_declared_gms_keeps_the_built_in_command(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(
        engine=FAILOVER,
        roles=TWO_WORKERS,
        services=[
            {
                "name": "gms",
                "type": "gms",
                "placement": {"node": "agg", "per": "worker"},
                "readiness": {"log": {"pattern": "GMS ready:"}, "timeout_seconds": 300},
            }
        ],
    )
    specs = _by_name(plan_job(recipe, cluster, "n0", "5"))
    gms = specs["service_gms_agg_1_n0"]
    assert gms.implied_by is None
    assert gms.readiness == LogProbe(
        pattern="GMS ready:", timeout_seconds=300.0, interval_seconds=2.0
    )
    assert gms.env["CUDA_VISIBLE_DEVICES"] == "2,3"
    assert "count=2\n" in gms.argv[2]


def test_more_shadows_and_multi_node_master_ports(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(
        engine={"type": "vllm", "failover": {"shadow_engines": 2}},
        roles={"agg": {"nodes": 2, "workers": 1, "gpus": 16}},
    )
    plan = plan_job(recipe, cluster, "n[0-1]", "5")
    specs = _by_name(plan)
    names = [spec.name for spec in plan.processes if spec.kind == "worker"]
    assert names == [
        "agg_0_n0",
        "agg_0_n1",
        "agg_0_n0_e1",
        "agg_0_n1_e1",
        "agg_0_n0_e2",
        "agg_0_n1_e2",
    ]
    for engine, port in ((0, "29500"), (1, "29501"), (2, "29502")):
        suffix = f"_e{engine}" if engine else ""
        leader, follower = specs[f"agg_0_n0{suffix}"], specs[f"agg_0_n1{suffix}"]
        assert leader.ports["master_port"] == int(port)
        assert _flag(leader.argv, "--master-port") == _flag(follower.argv, "--master-port") == port
        assert "--headless" in follower.argv
        assert follower.shares_gpus_with == ("agg_0_n1" if engine else None)
    assert [s.name for s in plan.processes if s.role == "gms"] == [
        "service_gms_agg_0_n0",
        "service_gms_agg_0_n1",
    ]


def test_gms_service_without_failover_is_refused(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(
        engine="vllm",
        services=[{"name": "gms", "type": "gms", "placement": {"node": "agg", "per": "worker"}}],
    )
    with pytest.raises(PlanningError) as info:
        plan_job(recipe, cluster, "n0", "5")
    assert str(info.value) == (
        "$.services[gms]: a gms service serves vLLM failover workers but roles.agg has no "
        "engine.failover; set engine.failover or remove the service"
    )


# --- the gms script, run for real with bash and the fake server in tests/fakes/gms ---


def _start_gms(tmp_path: Path, count: int, **extra: str) -> tuple[subprocess.Popen[str], Path]:
    directory = tmp_path / "srtctl-1" / "agg_0"
    script = render_placeholders(gms_command(sys.executable)[2], {"worker_gpu_count": str(count)})
    env = {
        **os.environ,
        "GMS_SOCKET_DIR": str(directory),
        "PYTHONPATH": str(HERE / "fakes" / "gms"),
        **extra,
    }
    process = subprocess.Popen(
        ["bash", "-c", script], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    return process, directory


def test_gms_script_reports_ready_and_cleans_up_on_sigterm(tmp_path: Path) -> None:
    process, directory = _start_gms(tmp_path, 2)
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line == f"GMS ready: 4 sockets in {directory}\n"
    assert len(list(directory.glob("gms_*.sock"))) == 4
    time.sleep(0.2)
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=15)
    assert process.returncode == 143
    assert not directory.exists()


def test_gms_script_fails_when_a_server_exits(tmp_path: Path) -> None:
    process, directory = _start_gms(tmp_path, 2, FAKE_GMS_EXIT_DEVICE="1")
    _, stderr = process.communicate(timeout=20)
    assert process.returncode == 7
    assert "srt: a gpu_memory_service server exited (status 7)" in stderr
    assert directory.exists()  # the engines may still hold the lock file: only cleanup removes it
