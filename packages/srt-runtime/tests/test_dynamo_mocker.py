"""The supervisor against the real Dynamo frontend + mocker (ai-dynamo from PyPI) on 127.0.0.1:
the Dynamo health gate parses the real ``/health``, a benchmark request is served, and a
SIGKILLed worker aborts the run with its diagnosis. File-based discovery: no etcd, no NATS."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from rt_plans import execute, free_port, plan, spec

from srt_bench.testing import write_tiny_model
from srt_planner.plan import HealthGate, JobPlan
from srt_runtime.supervisor import Supervisor

pytestmark = pytest.mark.slow


def _plan(tmp_path: Path) -> JobPlan:
    model = write_tiny_model(tmp_path / "model")
    port = free_port()
    env = {
        "DYN_FILE_KV": str(tmp_path / "kv"),
        "DYN_TCP_RPC_HOST": "127.0.0.1",
        "DYN_TCP_RESPONSE_STREAM_HOST": "127.0.0.1",
        "DYN_EVENT_PLANE_HOST": "127.0.0.1",
        "DYN_SYSTEM_HOST": "127.0.0.1",
    }
    common = ("--discovery-backend", "file", "--request-plane", "tcp")
    body = "{'model': 'tiny', 'prompt': 'hello world', 'max_tokens': 4}"
    request = (
        f"import httpx; r = httpx.post('http://127.0.0.1:{port}/v1/completions', json={body}, "
        "timeout=60); print(r.status_code, r.json()['usage']['completion_tokens'])"
    )
    return plan(
        spec(
            "agg_0_node-01",
            ("python", "-m", "dynamo.mocker", "--model-path", str(model), "--model-name",
             "tiny", "--speedup-ratio", "0", *common),
            role="agg", env=env, log_file="node-01_agg_w0.out",
        ),
        spec(
            "frontend_0",
            ("python", "-m", "dynamo.frontend", "--http-host", "127.0.0.1", "--http-port",
             str(port), *common),
            kind="frontend", phase="frontends", env=env, log_file="node-01_frontend_0.out",
        ),
        spec("benchmark", ("python", "-c", request), kind="benchmark", phase="benchmark",
             log_file="benchmark.out"),
        health=HealthGate(family="dynamo", url=f"http://127.0.0.1:{port}/health",
                          expected_decode=1, max_attempts=60, interval_seconds=2.0),
    )  # fmt: skip


def test_a_mocker_deployment_passes_the_gate_and_serves_the_benchmark(
    tmp_path: Path, job_dir: Path
) -> None:
    run = execute(_plan(tmp_path), job_dir)

    assert run.exit_code == 0, run.diagnosis
    assert run.log("benchmark.out") == "200 4\n"
    assert ("health", "running") in run.stages


def test_a_killed_mocker_aborts_the_run_with_its_diagnosis(tmp_path: Path, job_dir: Path) -> None:
    def kill_worker(sup: Supervisor, stage: str, status: str) -> None:
        if stage == "benchmark":
            worker = next(p for p in sup.procs if p.spec.name == "agg_0_node-01")
            os.kill(worker.handle.pid, signal.SIGKILL)

    job_plan = _plan(tmp_path)
    run = execute(job_plan, job_dir, on_status=kill_worker)

    assert run.exit_code == 1
    assert run.diagnosis.splitlines()[2:5] == [
        "  what:   agg_0_node-01",
        "  node:   node-01",
        "  exit:   killed by signal 9",
    ]
