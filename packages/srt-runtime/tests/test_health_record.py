"""The health gate records its facts in ``logs/health_gate.json`` when it passes (the planned and
seen worker counts, when, where the status events are) for ``srt-bench validity``."""

from __future__ import annotations

import time
from pathlib import Path

import msgspec
from rt_plans import execute, fake, free_port, plan, spec, write_routes

from srt_planner.plan import HealthGate
from srt_schema.validity import HealthGateRecord


def test_a_passed_gate_writes_its_counts_and_the_events_file(tmp_path: Path, job_dir: Path) -> None:
    fe_port = free_port()
    backend = {"component": "backend", "endpoint": "generate"}
    routes = write_routes(
        tmp_path / "routes.json",
        {
            "/health": [200, {"instances": [backend, backend, backend]}],
            "/v1/models": [200, {"data": [{"id": "test-model"}]}],
        },
    )
    job_plan = plan(
        spec("agg_0_node-01", fake("on-term", "forever"), role="agg"),
        spec(
            "frontend_0",
            fake("on-term", "http", fe_port, routes, "forever"),
            kind="frontend",
            phase="frontends",
        ),
        spec("benchmark", fake("say", "done"), kind="benchmark", phase="benchmark"),
        health=HealthGate(
            family="dynamo",
            url=f"http://127.0.0.1:{fe_port}/health",
            expected_decode=2,
            max_attempts=40,
            interval_seconds=0.5,
        ),
    )
    before = time.time()
    run = execute(job_plan, job_dir)
    assert run.exit_code == 0, run.diagnosis
    data = (job_dir / "logs" / "health_gate.json").read_bytes()
    record = msgspec.json.decode(data, type=HealthGateRecord)
    assert (record.family, record.expected_prefill, record.expected_decode) == ("dynamo", 0, 2)
    assert (record.seen_prefill, record.seen_decode) == (0, 3)
    assert before <= record.passed_unix <= time.time()
    assert record.events_file == str(job_dir / "status_events.jsonl")
