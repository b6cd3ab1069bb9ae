"""Every stage, in order, with the LocalLauncher and scripted processes."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import yaml
from rt_plans import execute, fake, free_port, plan, read_trace, spec, write_routes

from srt_planner.plan import GeneratedFile, HealthGate, LogProbe, TcpProbe


def test_every_stage_runs_in_order_and_the_run_succeeds(
    tmp_path: Path, job_dir: Path, trace: Path
) -> None:
    etcd_port, fe_port = free_port(), free_port()
    routes = write_routes(
        tmp_path / "routes.json",
        {
            "/health": [
                200,
                {
                    "instances": [
                        {"component": "backend", "endpoint": "generate"},
                        {"component": "backend", "endpoint": "clear_kv_blocks"},
                    ]
                },
            ],
            "/v1/models": [200, {"data": [{"id": "test-model"}]}],
            "_trace": ["/health"],
        },
    )
    tcp = TcpProbe(host="127.0.0.1", port=etcd_port, timeout_seconds=20, interval_seconds=0.05)
    ready_line = LogProbe(pattern=r"^worker ready$", timeout_seconds=20, interval_seconds=0.05)
    up = LogProbe(pattern="^up$", timeout_seconds=20, interval_seconds=0.05)
    job_plan = plan(
        spec(
            "setup_node-01",
            fake("trace", trace),
            kind="service",
            phase="host_setup",
            log_file="host_setup_node-01.out",
        ),
        spec(
            "service_etcd",
            fake("trace", trace, "on-term", "tcp", etcd_port, "forever"),
            kind="service",
            phase="infra",
            readiness=tcp,
            stop_tier=2,
        ),
        spec(
            "stage_model_node-01",
            fake("trace", trace),
            kind="service",
            phase="before_workers",
            oneshot=True,
            order=5,
        ),
        spec(
            "agg_0_node-01",
            fake("trace", trace, "on-term", "say", "worker ready", "forever"),
            role="agg",
            readiness=ready_line,
            log_file="node-01_agg_w0.out",
        ),
        spec(
            "frontend_0",
            fake("trace", trace, "on-term", "http", fe_port, routes, "forever"),
            kind="frontend",
            phase="frontends",
            log_file="node-01_frontend_0.out",
        ),
        spec(
            "service_exporter",
            fake("trace", trace, "on-term", "say", "up", "forever"),
            kind="service",
            phase="after_frontend",
            critical=False,
            readiness=up,
        ),
        spec(
            "telemetry",
            fake("trace", trace, "on-term", "say", "up", "forever"),
            kind="telemetry",
            phase="telemetry",
            readiness=up,
        ),
        spec(
            "benchmark",
            fake("trace", trace, "say", "bench done"),
            kind="benchmark",
            phase="benchmark",
            log_file="benchmark.out",
        ),
        spec(
            "eval", fake("trace", trace), kind="benchmark", phase="post_eval", log_file="eval.out"
        ),
        health=HealthGate(
            family="dynamo",
            url=f"http://127.0.0.1:{fe_port}/health",
            expected_decode=1,
            max_attempts=40,
            interval_seconds=0.5,
        ),
        teardown=(
            spec(
                "teardown_node-01",
                fake("trace", trace),
                kind="service",
                phase="host_setup",
                log_file="host_teardown_node-01.out",
            ),
        ),
        frontend_url=f"http://127.0.0.1:{fe_port}",
    )

    run = execute(job_plan, job_dir)

    assert run.exit_code == 0, run.diagnosis
    assert run.diagnosis == ""
    starts = [line for line in read_trace(trace) if not line.endswith(" term")]
    assert starts == [
        "setup_node-01 start",
        "service_etcd start",
        "stage_model_node-01 start",
        "agg_0_node-01 start",
        "frontend_0 start",
        "frontend_0 served /health",  # the gate saw the worker before...
        "service_exporter start",  # ...after_frontend services started
        "telemetry start",
        "benchmark start",
        "eval start",
        "teardown_node-01 start",
    ]
    # Cleanup: every long-running process got SIGTERM, etcd (tier 2) last.
    terms = [line.split()[0] for line in read_trace(trace) if line.endswith(" term")]
    assert terms[-1] == "service_etcd"
    assert sorted(terms) == sorted(
        ["service_etcd", "agg_0_node-01", "frontend_0", "service_exporter", "telemetry"]
    )
    assert run.stages == [
        ("starting", "running"),
        ("host_setup", "running"),
        ("head_infrastructure", "running"),
        ("before_workers", "running"),
        ("workers", "running"),
        ("frontend", "running"),
        ("health", "running"),
        ("after_frontend", "running"),
        ("telemetry", "running"),
        ("benchmark", "running"),
        ("post_eval", "running"),
        ("cleanup", "running"),
        ("cleanup", "completed"),
    ]
    status = json.loads((job_dir / "status.json").read_text())
    assert (status["status"], status["stage"], status["exit_code"]) == ("completed", "cleanup", 0)
    assert "bench done" in run.log("benchmark.out")
    assert (job_dir / "logs" / "host_teardown_node-01.out").exists()
    lock = yaml.safe_load((job_dir / "recipe.lock.yaml").read_text())
    assert lock["lock"]["exit_code"] == 0
    assert lock["lock"]["status"] == "completed"
    assert lock["lock"]["started_at"] <= lock["lock"]["finished_at"]
    assert lock["lock"]["worker_restarts"] == {"total_restarts": 0, "endpoints": {}, "events": []}


def test_benchmark_exit_code_is_the_job_exit_code_and_post_eval_is_skipped(
    job_dir: Path, trace: Path
) -> None:
    job_plan = plan(
        spec("agg_0", fake("on-term", "forever")),
        spec(
            "benchmark",
            fake("trace", trace, "say", "no such model", "exit", 7),
            kind="benchmark",
            phase="benchmark",
        ),
        spec("eval", fake("trace", trace), kind="benchmark", phase="post_eval"),
    )

    run = execute(job_plan, job_dir)

    assert run.exit_code == 7
    assert read_trace(trace) == ["benchmark start"]
    assert run.diagnosis.splitlines()[1:10] == [
        "RUN FAILED",
        "  what:   benchmark",
        "  node:   node-01",
        "  exit:   exit code 7",
        "  reason: the benchmark benchmark exited with code 7; the job exits with it",
        "  cause:  unknown cause (no failure catalog entry matched; read the log lines)",
        f"  log:    {job_dir / 'logs' / 'benchmark.out'}",
        "  last 1 lines of the log:",
        "    | no such model",
    ]
    assert run.stages[-1] == ("cleanup", "failed")
    assert run.events[-1]["exit_code"] == 7


def test_generated_files_are_written_before_launch_with_their_mode(job_dir: Path) -> None:
    job_plan = plan(
        spec(
            "benchmark",
            ("bash", "-c", "cat nginx.conf && ./hook.sh"),
            kind="benchmark",
            phase="benchmark",
        ),
        files=(
            GeneratedFile(path="nginx.conf", content="worker_processes 1;\n"),
            GeneratedFile(path="hook.sh", content="#!/bin/sh\necho hook ran\n", mode=0o755),
        ),
    )

    run = execute(job_plan, job_dir)

    assert run.exit_code == 0, run.diagnosis
    assert run.log("benchmark.out") == "worker_processes 1;\nhook ran\n"
    assert stat.S_IMODE((job_dir / "logs" / "hook.sh").stat().st_mode) == 0o755


def test_order_groups_wait_for_readiness_before_the_next_group(job_dir: Path, trace: Path) -> None:
    """sequential_node_start: batch 1 starts only once batch 0 printed its ready line."""
    ready = LogProbe(pattern="ready", timeout_seconds=20, interval_seconds=0.05)
    job_plan = plan(
        spec(
            "w0",
            fake("sleep", 0.3, "trace", trace, "say", "ready", "on-term", "forever"),
            role="decode",
            index=0,
            order=0,
            readiness=ready,
        ),
        spec(
            "w1",
            fake("trace", trace, "say", "ready", "on-term", "forever"),
            role="decode",
            index=1,
            order=1,
            readiness=ready,
        ),
        spec("benchmark", fake("exit", 0), kind="benchmark", phase="benchmark"),
    )

    run = execute(job_plan, job_dir)

    assert run.exit_code == 0, run.diagnosis
    assert [line for line in read_trace(trace) if "start" in line] == ["w0 start", "w1 start"]


def test_terminal_services_end_the_job_with_the_worst_exit_code(job_dir: Path) -> None:
    job_plan = plan(
        spec(
            "service_a_0",
            fake("sleep", 0.1, "exit", 0),
            kind="service",
            phase="infra",
            terminal=True,
        ),
        spec(
            "service_a_1",
            fake("sleep", 0.2, "exit", 3),
            kind="service",
            phase="infra",
            terminal=True,
        ),
        spec("helper", fake("on-term", "forever"), kind="service", phase="infra"),
    )

    run = execute(job_plan, job_dir)

    assert run.exit_code == 3
    assert (
        "  reason: a terminal service service_a_1 exited with code 3; the job exits with it"
        in run.diagnosis
    )
    assert ("serving", "running") in run.stages


def test_the_lockfile_is_the_submitted_recipe_plus_the_outcome(job_dir: Path) -> None:
    (job_dir / "config.yaml").write_text("schema: 2\nname: my-run\nengine: sglang\n")
    job_plan = plan(spec("benchmark", fake("exit", 3), kind="benchmark", phase="benchmark"))

    execute(job_plan, job_dir)

    lock = yaml.safe_load((job_dir / "recipe.lock.yaml").read_text())
    assert list(lock) == ["schema", "name", "engine", "lock"]
    assert (lock["name"], lock["lock"]["status"], lock["lock"]["exit_code"]) == (
        "my-run",
        "failed",
        3,
    )


def test_post_processing_runs_after_the_lockfile_and_before_the_final_status(
    job_dir: Path,
) -> None:
    seen: list[tuple[int, str, str]] = []

    def before_final(code: int) -> None:
        lock = yaml.safe_load((job_dir / "recipe.lock.yaml").read_text())["lock"]
        status = json.loads((job_dir / "status.json").read_text())
        seen.append((code, lock["status"], f"{status['stage']}/{status['status']}"))

    job_plan = plan(spec("benchmark", fake("exit", 5), kind="benchmark", phase="benchmark"))

    run = execute(job_plan, job_dir, before_final=before_final)

    assert seen == [(5, "failed", "cleanup/running")]
    assert run.stages[-1] == ("cleanup", "failed")
