"""Failure paths: critical exits, fatal log lines, readiness, the health gate, host_setup,
launch errors, cleanup escalation; every one ends with cleanup, teardown and a diagnosis."""

from __future__ import annotations

import json
from pathlib import Path

from rt_plans import (
    awaits,
    execute,
    fake,
    free_port,
    plan,
    read_trace,
    spec,
    sweep_log,
    write_routes,
)

from srt_planner.plan import HealthGate, HttpProbe, LogProbe, TcpProbe


def _teardown(trace: Path) -> tuple:
    return (
        spec(
            "teardown_node-01",
            fake("trace", trace),
            kind="service",
            phase="host_setup",
            log_file="host_teardown_node-01.out",
        ),
    )


def test_a_critical_worker_exit_aborts_the_run_with_a_diagnosis(job_dir: Path, trace: Path) -> None:
    job_plan = plan(
        spec("setup", fake("exit", 0), kind="service", phase="host_setup"),
        spec(
            "decode_0_node-02",
            fake("say", "loading", *awaits(trace, "benchmark start", 1), "say", "boom", "exit", 3),
            role="decode",
            node="node-02",
            log_file="node-02_decode_w0.out",
        ),
        spec(
            "benchmark",
            fake("on-term", "trace", trace, "forever"),
            kind="benchmark",
            phase="benchmark",
        ),
        teardown=_teardown(trace),
    )

    run = execute(job_plan, job_dir)

    assert run.exit_code == 1
    log = job_dir / "logs" / "node-02_decode_w0.out"
    assert run.diagnosis.splitlines()[1:8] == [
        "RUN FAILED",
        "  what:   decode_0_node-02",
        "  node:   node-02",
        "  exit:   exit code 3",
        "  reason: decode_0_node-02 (worker decode) on node-02 exited with code 3",
        "  cause:  unknown cause (no failure catalog entry matched; read the log lines)",
        f"  log:    {log}",
    ]
    assert "    | boom" in run.diagnosis
    # The benchmark was stopped, then the host teardown ran.
    assert read_trace(trace) == ["benchmark start", "benchmark term", "teardown_node-01 start"]
    assert run.stages[-1] == ("cleanup", "failed")
    status = json.loads((job_dir / "status.json").read_text())
    assert status["message"] == "decode_0_node-02 (worker decode) on node-02 exited with code 3"


def test_a_fatal_log_line_of_a_running_critical_worker_aborts_the_run(job_dir: Path) -> None:
    job_plan = plan(
        spec(
            "prefill_0",
            fake(
                "say",
                "ok",
                "sleep",
                0.2,
                "say",
                "CUDA error: an illegal memory access",
                "on-term",
                "forever",
            ),
            role="prefill",
            fatal_log_patterns=(r"CUDA error", r"NCCL WARN"),
        ),
        spec("benchmark", fake("on-term", "forever"), kind="benchmark", phase="benchmark"),
    )

    run = execute(job_plan, job_dir)

    assert run.exit_code == 1
    assert "  line:   CUDA error: an illegal memory access" in run.diagnosis
    assert (
        "  reason: prefill_0 (worker prefill) on node-01 printed a fatal line: "
        "CUDA error: an illegal memory access"
    ) in run.diagnosis


def test_a_fatal_line_split_across_writes_with_invalid_utf8_is_found(job_dir: Path) -> None:
    # "EngineCore fail" + "ed \xff\xfe" ... newline, written in three pieces.
    job_plan = plan(
        spec(
            "agg_0",
            fake(
                "raw",
                b"EngineCore fail".hex(),
                "sleep",
                0.3,
                "raw",
                b"ed \xff\xfe".hex(),
                "sleep",
                0.3,
                "raw",
                b"!\n".hex(),
                "on-term",
                "forever",
            ),
            role="agg",
            fatal_log_patterns=(r"EngineCore failed",),
        ),
        spec("benchmark", fake("on-term", "forever"), kind="benchmark", phase="benchmark"),
    )

    run = execute(job_plan, job_dir)

    assert run.exit_code == 1
    assert "  line:   EngineCore failed \ufffd\ufffd!" in run.diagnosis


def test_non_critical_exits_and_fatal_lines_only_log(job_dir: Path) -> None:
    job_plan = plan(
        spec("decode_1", fake("exit", 5), role="decode", critical=False),
        spec(
            "decode_2",
            fake("say", "FATAL", "on-term", "forever"),
            role="decode",
            critical=False,
            fatal_log_patterns=("FATAL",),
        ),
        spec(
            "benchmark",
            fake(*awaits(sweep_log(job_dir), "Non-critical decode_", 2), "exit", 0),
            kind="benchmark",
            phase="benchmark",
        ),
    )

    run = execute(job_plan, job_dir)

    assert run.exit_code == 0, run.diagnosis
    sweep = sweep_log(job_dir).read_text()
    assert "Non-critical decode_1 on node-01 exited with code 5; see" in sweep
    assert "Non-critical decode_2 on node-01 printed a fatal line: FATAL" in sweep


def test_a_critical_exit_with_code_zero_is_not_a_failure(job_dir: Path) -> None:
    job_plan = plan(
        spec("agg_0", fake("exit", 0), role="agg"),
        spec(
            "benchmark",
            fake(*awaits(sweep_log(job_dir), "agg_0 on node-01 exited with code 0", 1)),
            kind="benchmark",
            phase="benchmark",
        ),
    )

    assert execute(job_plan, job_dir).exit_code == 0


def test_a_service_that_dies_before_its_probe_passes_fails_the_stage(job_dir: Path) -> None:
    port = free_port()
    probe = TcpProbe(host="127.0.0.1", port=port, timeout_seconds=30, interval_seconds=0.05)
    job_plan = plan(
        spec(
            "service_nats",
            fake("say", "bad config", "exit", 2),
            kind="service",
            phase="infra",
            readiness=probe,
            critical=False,
        ),
        spec("agg_0", fake("on-term", "forever")),
    )

    run = execute(job_plan, job_dir)

    assert run.exit_code == 1
    log = job_dir / "logs" / "service_nats.out"
    assert (
        f"  reason: service_nats exited with code 2 on node-01 before it became ready (it "
        f"should accept TCP connections on 127.0.0.1:{port}); see {log}"
    ) in run.diagnosis
    assert "    | bad config" in run.diagnosis
    assert not (job_dir / "logs" / "agg_0.out").exists()


def test_a_service_that_never_becomes_ready_times_out(job_dir: Path) -> None:
    port = free_port()
    probe = HttpProbe(host="127.0.0.1", port=port, timeout_seconds=0.5, interval_seconds=0.05)
    job_plan = plan(
        spec(
            "service_x",
            fake("on-term", "forever"),
            kind="service",
            phase="before_workers",
            readiness=probe,
        ),
    )

    run = execute(job_plan, job_dir)

    assert run.exit_code == 1
    log = job_dir / "logs" / "service_x.out"
    assert (
        f"  reason: service_x on node-01 did not answer 200 on "
        f"http://127.0.0.1:{port}/health within 0.5 s; see {log}"
    ) in run.diagnosis


def test_a_log_probe_waits_for_its_line(job_dir: Path, trace: Path) -> None:
    probe = LogProbe(pattern=r"listening on \d+", timeout_seconds=10, interval_seconds=0.05)
    job_plan = plan(
        spec(
            "service_y",
            fake("sleep", 0.3, "say", "listening on 99", "trace", trace, "on-term", "forever"),
            kind="service",
            phase="infra",
            readiness=probe,
        ),
        spec("benchmark", fake("trace", trace), kind="benchmark", phase="benchmark"),
    )

    run = execute(job_plan, job_dir)

    assert run.exit_code == 0, run.diagnosis
    assert read_trace(trace)[:2] == ["service_y start", "benchmark start"]


def test_the_health_gate_gives_up_at_its_deadline(tmp_path: Path, job_dir: Path) -> None:
    port = free_port()
    routes = write_routes(tmp_path / "r.json", {"/health": [200, {"instances": []}]})
    job_plan = plan(
        spec(
            "frontend_0",
            fake("on-term", "http", port, routes, "forever"),
            kind="frontend",
            phase="frontends",
        ),
        spec("benchmark", fake("exit", 0), kind="benchmark", phase="benchmark"),
        health=HealthGate(
            family="dynamo",
            url=f"http://127.0.0.1:{port}/health",
            expected_decode=2,
            max_attempts=3,
            interval_seconds=0.2,
        ),
    )

    run = execute(job_plan, job_dir)

    assert run.exit_code == 1
    assert (
        f"  reason: Server did not become healthy: dynamo gate at http://127.0.0.1:{port}/health "
        "not ready after 0.6 s (3 x 0.2 s); last: Model is not ready, waiting for 0 "
        "prefills and 2 decodes. Have 0 prefills and 0 decodes."
    ) in run.diagnosis
    assert not (job_dir / "logs" / "benchmark.out").exists()


def test_host_setup_failure_fails_the_run_and_teardown_still_runs(
    job_dir: Path, trace: Path
) -> None:
    job_plan = plan(
        spec("setup_node-01", fake("exit", 0), kind="service", phase="host_setup"),
        spec(
            "setup_node-02",
            fake("say", "sudo: a password is required", "exit", 1),
            kind="service",
            phase="host_setup",
            node="node-02",
            log_file="host_setup_node-02.out",
        ),
        spec("agg_0", fake("trace", trace)),
        teardown=_teardown(trace),
    )

    run = execute(job_plan, job_dir)

    assert run.exit_code == 1
    log = job_dir / "logs" / "host_setup_node-02.out"
    assert (
        f"  reason: host_setup failed on: node-02 (setup_node-02 exited with code 1, see {log})"
    ) in run.diagnosis
    assert read_trace(trace) == ["teardown_node-01 start"]


def test_ignored_host_setup_failure_only_warns(job_dir: Path) -> None:
    job_plan = plan(
        spec("setup_node-01", fake("exit", 1), kind="service", phase="host_setup", critical=False),
        spec("benchmark", fake("exit", 0), kind="benchmark", phase="benchmark"),
    )

    assert execute(job_plan, job_dir).exit_code == 0


def test_a_one_shot_step_past_its_timeout_is_killed(job_dir: Path) -> None:
    job_plan = plan(
        spec(
            "stage_model_node-01",
            fake("ignore-term", "forever"),
            kind="service",
            phase="before_workers",
            oneshot=True,
            timeout_seconds=0.3,
        ),
    )

    run = execute(job_plan, job_dir)

    assert run.exit_code == 1
    assert "stage_model_node-01 timed out after 0.3 s and was killed" in run.diagnosis


def test_a_program_that_cannot_start_fails_the_run_clearly(job_dir: Path, trace: Path) -> None:
    job_plan = plan(
        spec("agg_0", ("/nonexistent/engine", "--serve")),
        teardown=_teardown(trace),
    )

    run = execute(job_plan, job_dir)

    assert run.exit_code == 1
    assert (
        "  reason: cannot start process 'agg_0' on node-01: '/nonexistent/engine': No such "
        "file or directory"
    ) in run.diagnosis
    assert read_trace(trace) == ["teardown_node-01 start"]


def test_cleanup_escalates_to_kill_and_stops_tiers_in_order(job_dir: Path, trace: Path) -> None:
    job_plan = plan(
        spec(
            "service_etcd",
            fake("on-term", "trace", trace, "forever"),
            kind="service",
            phase="infra",
            stop_tier=2,
        ),
        spec("agg_0", fake("on-term", "trace", trace, "forever")),
        spec(
            "stubborn",
            fake("ignore-term", "child", "trace", trace, "forever"),
            stop_grace_seconds=0.3,
        ),
        spec(
            "frontend_0",
            fake("on-term", "trace", trace, "forever"),
            kind="frontend",
            phase="frontends",
        ),
        spec(
            "benchmark",
            fake(*awaits(trace, " start", 4), "exit", 0),
            kind="benchmark",
            phase="benchmark",
        ),
    )

    run = execute(job_plan, job_dir)

    assert run.exit_code == 0, run.diagnosis
    terms = [line.split()[0] for line in read_trace(trace) if line.endswith(" term")]
    assert terms == ["frontend_0", "agg_0", "service_etcd"]
    # `stubborn` ignored SIGTERM and its grandchild was orphaned: the leftover-process guard
    # of conftest proves both were killed.


def test_an_http_probe_passes_when_the_service_answers(tmp_path: Path, job_dir: Path) -> None:
    port = free_port()
    routes = write_routes(tmp_path / "r.json", {"/ready": [204, {}]})
    probe = HttpProbe(
        host="127.0.0.1",
        port=port,
        path="/ready",
        status=204,
        timeout_seconds=20,
        interval_seconds=0.05,
    )
    job_plan = plan(
        spec("service_api", fake("on-term", "sleep", 0.2, "http", port, routes, "forever"),
             kind="service", phase="infra", readiness=probe),
        spec("benchmark", fake("exit", 0), kind="benchmark", phase="benchmark"),
    )  # fmt: skip

    run = execute(job_plan, job_dir)

    assert run.exit_code == 0, run.diagnosis
    assert (
        f"service_api is ready (answer 204 on http://127.0.0.1:{port}/ready)"
        in sweep_log(job_dir).read_text()
    )
