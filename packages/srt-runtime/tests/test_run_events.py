"""status_events.jsonl: the typed process / health / benchmark-progress events a run records,
decoded with the runtime's own structs (what ``srtctl status`` reads)."""

from __future__ import annotations

from pathlib import Path

from rt_fakes import FakeClock
from rt_plans import execute, fake, free_port, plan, spec, write_routes

from srt_planner.plan import HealthGate, LogProbe, RestartSpec
from srt_runtime.status import (
    BenchmarkProgress,
    HealthPassed,
    ProcessEvent,
    StatusEvent,
    decode_event_lines,
)


def test_a_run_records_started_ready_exited_health_and_benchmark_progress(
    tmp_path: Path, job_dir: Path
) -> None:
    fe_port = free_port()
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
        },
    )
    ready_line = LogProbe(pattern=r"^worker ready$", timeout_seconds=20, interval_seconds=0.05)
    job_plan = plan(
        spec(
            "agg_0_node-01",
            fake("on-term", "say", "worker ready", "forever"),
            role="agg",
            readiness=ready_line,
        ),
        spec(
            "frontend_0",
            fake("on-term", "http", fe_port, routes, "forever"),
            kind="frontend",
            phase="frontends",
        ),
        spec(
            "benchmark",
            fake("say", "[srt-bench] concurrency 1: warmup with 1 requests", "say", "noise"),
            kind="benchmark",
            phase="benchmark",
        ),
        health=HealthGate(
            family="dynamo",
            url=f"http://127.0.0.1:{fe_port}/health",
            expected_decode=1,
            max_attempts=40,
            interval_seconds=0.5,
        ),
    )

    run = execute(job_plan, job_dir)

    assert run.exit_code == 0, run.diagnosis
    assert [e for e in run.processes() if e[1] == "agg_0_node-01"] == [
        ("started", "agg_0_node-01"),
        ("ready", "agg_0_node-01"),
        ("exited", "agg_0_node-01"),
    ]
    assert ("exited", "benchmark") in run.processes()
    worker = next(e for e in run.records if isinstance(e, ProcessEvent))
    assert (worker.kind, worker.process, worker.node, worker.job_id) == (
        "worker",
        "agg_0_node-01",
        "node-01",
        "4242",
    )
    (health,) = [e for e in run.records if isinstance(e, HealthPassed)]
    assert health.url == f"http://127.0.0.1:{fe_port}/health"
    progress = [(e.process, e.line) for e in run.records if isinstance(e, BenchmarkProgress)]
    assert progress == [("benchmark", "concurrency 1: warmup with 1 requests")]
    # The health event comes after the worker was ready and before the benchmark started.
    kinds = [
        (type(e).__name__, getattr(e, "what", None), getattr(e, "name", None)) for e in run.records
    ]
    ready_at = kinds.index(("ProcessEvent", "ready", "agg_0_node-01"))
    health_at = kinds.index(("HealthPassed", None, None))
    bench_at = kinds.index(("ProcessEvent", "started", "benchmark"))
    assert ready_at < health_at < bench_at


def test_a_relaunch_is_recorded_as_restarted_under_its_new_name(job_dir: Path) -> None:
    restart = RestartSpec(policy="on-failure", max_restarts=1, backoff_seconds=1)
    job_plan = plan(
        spec("decode_0_node-01", fake("exit", 3), role="decode", restart=restart),
        spec("benchmark", fake("on-term", "forever"), kind="benchmark", phase="benchmark"),
    )

    run = execute(job_plan, job_dir, clock=FakeClock())

    assert run.exit_code == 1
    assert [e for e in run.processes() if e[1].startswith("decode")] == [
        ("started", "decode_0_node-01"),
        ("exited", "decode_0_node-01"),
        ("restarted", "decode_0_node-01_r1"),
        ("started", "decode_0_node-01_r1"),
        ("exited", "decode_0_node-01_r1"),
    ]
    (relaunch,) = [e for e in run.records if isinstance(e, ProcessEvent) and e.what == "restarted"]
    assert (relaunch.name, relaunch.process) == ("decode_0_node-01_r1", "decode_0_node-01")


def test_a_line_without_the_event_tag_decodes_as_a_status_event() -> None:
    old = (
        b'{"job_id":"1","status":"running","stage":"workers","message":"",'
        b'"exit_code":null,"at":"2026-11-29T15:00:00.000+00:00"}\n'
        b'{"event":"health","job_id":"1","url":"http://h/health","seconds":1.5,"at":"x"}\n'
        b'{"event":"process","job_id":"1"\n'
    )
    events = decode_event_lines(old)
    assert [type(e) for e in events] == [StatusEvent, HealthPassed]
