"""A stop request (what the SIGTERM/SIGINT handler sends) during each stage: the run unwinds,
stops everything, runs the host teardown and exits 1 with a diagnosis."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from rt_plans import execute, fake, free_port, plan, read_trace, spec, write_routes

from srt_planner.plan import HealthGate, JobPlan
from srt_runtime.supervisor import Supervisor

STAGES = [
    "host_setup",
    "head_infrastructure",
    "before_workers",
    "workers",
    "frontend",
    "health",
    "after_frontend",
    "telemetry",
    "benchmark",
    "post_eval",
    "serving",
]


def _full_plan(tmp_path: Path, trace: Path, stage: str) -> JobPlan:
    port = free_port()
    ready = {"instances": [{"component": "backend", "endpoint": "generate"}]}
    routes = write_routes(
        tmp_path / "routes.json",
        {
            "/health": [200, ready if stage != "health" else {}],
            "/v1/models": [200, {"data": [{"id": "test-model"}]}],
        },
    )
    bench_steps: tuple[Any, ...] = ("exit", 0) if stage == "post_eval" else ("forever",)
    processes = [
        spec("setup_node-01", fake("trace", trace), kind="service", phase="host_setup"),
        spec(
            "service_etcd",
            fake("trace", trace, "on-term", "forever"),
            kind="service",
            phase="infra",
            stop_tier=2,
        ),
        spec(
            "stage_model",
            fake("trace", trace),
            kind="service",
            phase="before_workers",
            oneshot=True,
        ),
        spec("agg_0", fake("trace", trace, "on-term", "forever"), role="agg"),
        spec(
            "frontend_0",
            fake("trace", trace, "on-term", "http", port, routes, "forever"),
            kind="frontend",
            phase="frontends",
        ),
        spec(
            "exporter",
            fake("trace", trace, "on-term", "forever"),
            kind="service",
            phase="after_frontend",
        ),
        spec(
            "telemetry",
            fake("trace", trace, "on-term", "forever"),
            kind="telemetry",
            phase="telemetry",
        ),
        spec(
            "eval", fake("trace", trace, "on-term", "forever"), kind="benchmark", phase="post_eval"
        ),
    ]
    if stage != "serving":
        processes.append(
            spec(
                "benchmark",
                fake("trace", trace, "on-term", *bench_steps),
                kind="benchmark",
                phase="benchmark",
            )
        )
    return plan(
        *processes,
        health=HealthGate(
            family="dynamo",
            url=f"http://127.0.0.1:{port}/health",
            expected_decode=1,
            max_attempts=100,
            interval_seconds=1.0,
        ),
        serve_only=stage == "serving",
        teardown=(spec("teardown", fake("trace", trace), kind="service", phase="host_setup"),),
        frontend_url=f"http://127.0.0.1:{port}",
    )


@pytest.mark.parametrize("stage", STAGES)
def test_a_stop_during_each_stage_cleans_up_and_exits_1(
    tmp_path: Path, job_dir: Path, trace: Path, stage: str
) -> None:
    def on_status(sup: Supervisor, seen: str, status: str) -> None:
        if seen == stage and status == "running":
            sup.request_stop("received SIGTERM")

    run = execute(_full_plan(tmp_path, trace, stage), job_dir, on_status=on_status)

    assert run.exit_code == 1
    assert run.diagnosis.splitlines()[1:4] == [
        "RUN FAILED",
        "  what:   supervisor",
        f"  reason: stopped: received SIGTERM during stage {stage}",
    ]
    stages = [s for s, _ in run.stages]
    assert stages[-3:] == [stage, "cleanup", "cleanup"]
    assert run.stages[-1] == ("cleanup", "cancelled")
    lines = read_trace(trace)
    assert lines[-1] == "teardown start"
    started = {line.split()[0] for line in lines if line.endswith(" start")} - {"teardown"}
    # Nothing of a later stage was started.
    later = STAGES[STAGES.index(stage) + 1 :]
    by_stage = {
        "exporter": "after_frontend",
        "telemetry": "telemetry",
        "eval": "post_eval",
        "benchmark": "benchmark",
        "frontend_0": "frontend",
    }
    assert not [name for name in started if by_stage.get(name) in later]
