"""The restart policy: pure decisions, then the state machine with real processes and a fake
clock (backoffs pass without sleeping)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from rt_fakes import FakeClock
from rt_plans import awaits, execute, fake, plan, read_trace, spec, sweep_log

from srt_planner.plan import LogProbe, RestartSpec
from srt_runtime.restart import backoff_for, decide


def test_backoff_doubles_from_the_base_up_to_the_cap() -> None:
    """Base 10, cap 120 -> 10, 20, 40, 80, 120, 120 (docs/planner.md#failure-and-restart)."""
    restart = RestartSpec(policy="on-failure", backoff_seconds=10, max_backoff_seconds=120)
    assert [backoff_for(restart, n) for n in range(6)] == [10, 20, 40, 80, 120, 120]


@pytest.mark.parametrize(
    ("policy", "done", "code", "expected"),
    [
        ("never", 0, 1, "release"),
        ("on-failure", 0, 0, "release"),
        ("on-failure", 0, 1, "restart"),
        ("on-failure", 2, -9, "restart"),
        ("on-failure", 3, 1, "exhausted"),
        ("always", 0, 0, "restart"),
        ("always", 3, 0, "exhausted"),
    ],
)
def test_decide(policy: Any, done: int, code: int, expected: str) -> None:
    assert decide(RestartSpec(policy=policy, max_restarts=3), done, code) == expected


def _restarts(job_dir: Path) -> dict[str, Any]:
    return json.loads((job_dir / "logs" / "worker_restarts.json").read_text())


def _seconds(iso: str) -> float:
    return dt.datetime.fromisoformat(iso).timestamp()


def test_restarts_back_off_then_exhaust_and_a_critical_worker_fails_the_run(
    job_dir: Path, trace: Path
) -> None:
    restart = RestartSpec(
        policy="on-failure", max_restarts=2, backoff_seconds=10, max_backoff_seconds=15
    )
    job_plan = plan(
        spec(
            "decode_0_node-01",
            fake("trace", trace, "say", "crash", "exit", 3),
            role="decode",
            restart=restart,
            log_file="node-01_decode_w0.out",
        ),
        spec("benchmark", fake("on-term", "forever"), kind="benchmark", phase="benchmark"),
    )
    clock = FakeClock()

    run = execute(job_plan, job_dir, clock=clock)

    assert run.exit_code == 1
    # Three identical launches (the relaunches run under the same environment).
    assert read_trace(trace) == 3 * ["decode_0_node-01 start"]
    doc = _restarts(job_dir)
    assert doc["total_restarts"] == 2
    assert doc["endpoints"] == {
        "decode_0": {"policy": "on-failure", "restarts": 2, "max_restarts": 2, "exhausted": True}
    }
    events = doc["events"]
    assert [
        (e["worker"], e["outcome"], e["backoff_seconds"], e["exit_code"], e["attempt"])
        for e in events
    ] == [
        ("decode_0_node-01", "relaunched", 10.0, 3, 1),
        ("decode_0_node-01_r1", "relaunched", 15.0, 3, 2),
        ("decode_0_node-01_r2", "exhausted", None, 3, 3),
    ]
    for event in events[:2]:
        waited = _seconds(event["relaunched_at"]) - _seconds(event["exited_at"])
        assert waited >= event["backoff_seconds"] - 0.001  # timestamps have millisecond precision
    logs = job_dir / "logs"
    assert (logs / "node-01_decode_w0.out.1").read_text() == "crash\n"
    assert (logs / "node-01_decode_w0.out.2").read_text() == "crash\n"
    assert (logs / "node-01_decode_w0.out").read_text() == "crash\n"
    assert "  what:   decode_0_node-01_r2" in run.diagnosis
    assert "  exit:   exit code 3" in run.diagnosis
    lock = (job_dir / "recipe.lock.yaml").read_text()
    assert "total_restarts: 2" in lock


def test_exhaustion_of_a_non_critical_worker_leaves_the_run_alive(job_dir: Path) -> None:
    restart = RestartSpec(policy="on-failure", max_restarts=1, backoff_seconds=5)
    job_plan = plan(
        spec("decode_0", fake("exit", 3), role="decode", restart=restart, critical=False),
        spec(
            "benchmark",
            fake(*awaits(sweep_log(job_dir), "decode_0: restart budget spent", 1)),
            kind="benchmark",
            phase="benchmark",
        ),
    )

    run = execute(job_plan, job_dir, clock=FakeClock())

    assert run.exit_code == 0, run.diagnosis
    outcomes = [e["outcome"] for e in _restarts(job_dir)["events"]]
    assert outcomes == ["relaunched", "exhausted"]


def test_a_worker_that_recovers_after_one_restart(tmp_path: Path, job_dir: Path) -> None:
    """The first life dies before its probe passes; the readiness wait follows the relaunch."""
    restart = RestartSpec(policy="on-failure", max_restarts=3, backoff_seconds=30)
    ready = LogProbe(pattern="^serving$", timeout_seconds=600, interval_seconds=5)
    job_plan = plan(
        spec(
            "agg_0",
            fake("fail-once", tmp_path / "once", 9, "say", "serving", "on-term", "forever"),
            role="agg",
            restart=restart,
            readiness=ready,
        ),
        spec("benchmark", fake("exit", 0), kind="benchmark", phase="benchmark"),
    )
    clock = FakeClock()

    run = execute(job_plan, job_dir, clock=clock)

    assert run.exit_code == 0, run.diagnosis
    doc = _restarts(job_dir)
    assert doc["total_restarts"] == 1
    [event] = doc["events"]
    assert (event["outcome"], event["exit_code"], event["backoff_seconds"]) == (
        "relaunched",
        9,
        30.0,
    )
    # (virtual seconds: the fake clock runs much faster than the real process starts)
    assert event["ready_seconds"] is not None
    assert _seconds(event["ready_at"]) >= _seconds(event["relaunched_at"])
    assert run.log("agg_0.out") == "serving\n"
    assert (job_dir / "logs" / "agg_0.out.1").read_text() == ""
    assert clock.waited >= 30
    assert "agg_0: agg_0_r1 ready after" in sweep_log(job_dir).read_text()


def test_on_failure_releases_a_clean_exit(job_dir: Path) -> None:
    restart = RestartSpec(policy="on-failure", backoff_seconds=1)
    job_plan = plan(
        spec("agg_0", fake("exit", 0), role="agg", restart=restart),
        spec(
            "benchmark",
            fake(*awaits(sweep_log(job_dir), "agg_0 on node-01 exited with code 0", 1)),
            kind="benchmark",
            phase="benchmark",
        ),
    )

    run = execute(job_plan, job_dir, clock=FakeClock())

    assert run.exit_code == 0
    assert _restarts(job_dir)["events"] == []


def test_a_fatal_line_restarts_the_endpoint_and_its_sibling_ranks(
    tmp_path: Path, job_dir: Path, trace: Path
) -> None:
    """Two ranks of one endpoint: rank 1 prints a fatal line; both are stopped and relaunched."""
    restart = RestartSpec(policy="on-failure", max_restarts=2, backoff_seconds=10)
    job_plan = plan(
        spec(
            "prefill_0_node-01",
            fake("on-term", "trace", trace, "forever"),
            role="prefill",
            restart=restart,
        ),
        spec(
            "prefill_0_node-02",
            fake(
                "on-term",
                "trace",
                trace,
                *awaits(trace, "prefill_0_node-01 start", 1),
                "say-once",
                tmp_path / "once",
                "RuntimeError: NCCL failure",
                "forever",
            ),
            role="prefill",
            node="node-02",
            restart=restart,
            fatal_log_patterns=("NCCL failure",),
        ),
        spec(
            "benchmark",
            fake(*awaits(trace, " start", 4), "exit", 0),
            kind="benchmark",
            phase="benchmark",
        ),
    )

    run = execute(job_plan, job_dir, clock=FakeClock())

    assert run.exit_code == 0, run.diagnosis
    lines = read_trace(trace)
    # The launch environment is identical, so a relaunch traces under the planned name.
    assert sorted(lines) == sorted(
        2
        * [
            "prefill_0_node-01 start",
            "prefill_0_node-02 start",
            "prefill_0_node-01 term",
            "prefill_0_node-02 term",
        ]
    )
    # Both old ranks were stopped before any relaunch started.
    assert sorted(lines[:4]) == sorted(
        [
            "prefill_0_node-01 start",
            "prefill_0_node-02 start",
            "prefill_0_node-01 term",
            "prefill_0_node-02 term",
        ]
    )
    logs = job_dir / "logs"
    assert "RuntimeError: NCCL failure" in (logs / "prefill_0_node-02.out.1").read_text()
    assert "NCCL" not in (logs / "prefill_0_node-02.out").read_text()
    events = _restarts(job_dir)["events"]
    assert [(e["worker"], e["outcome"], e["reason"]) for e in events] == [
        ("prefill_0_node-02", "relaunched", "RuntimeError: NCCL failure")
    ]


def test_a_relaunch_that_cannot_start_is_recorded_and_fails_a_critical_run(
    tmp_path: Path, job_dir: Path
) -> None:
    engine = tmp_path / "engine.sh"
    engine.write_text('#!/bin/sh\nrm -f "$0"\necho dying\nexit 4\n')  # gone after one life
    engine.chmod(0o755)
    restart = RestartSpec(policy="on-failure", backoff_seconds=5)
    job_plan = plan(
        spec("decode_0", (str(engine),), role="decode", restart=restart),
        spec("benchmark", fake("on-term", "forever"), kind="benchmark", phase="benchmark"),
    )

    run = execute(job_plan, job_dir, clock=FakeClock())

    assert run.exit_code == 1
    [event] = _restarts(job_dir)["events"]
    assert (event["outcome"], event["exit_code"]) == ("launch_failed", 4)
    assert (
        f"  reason: relaunch of decode_0 failed: cannot start process 'decode_0_r1' on node-01: "
        f"'{engine}': No such file or directory"
    ) in run.diagnosis


def test_a_shadow_engine_is_its_own_restart_unit(job_dir: Path) -> None:
    """A vLLM shadow engine (engine 1) restarts on its own; its serving engine keeps running."""
    restart = RestartSpec(policy="on-failure", max_restarts=1, backoff_seconds=5)
    job_plan = plan(
        spec("decode_0", fake("forever"), role="decode", restart=restart),
        spec("decode_0_e1", fake("exit", 3), role="decode", restart=restart, engine=1),
        spec(
            "benchmark",
            fake(*awaits(sweep_log(job_dir), "decode_0_e1: restart budget spent", 1)),
            kind="benchmark",
            phase="benchmark",
        ),
    )

    run = execute(job_plan, job_dir, clock=FakeClock())

    doc = _restarts(job_dir)
    assert sorted(doc["endpoints"]) == ["decode_0", "decode_0_e1"]
    assert doc["endpoints"]["decode_0"]["restarts"] == 0
    assert doc["endpoints"]["decode_0_e1"]["restarts"] == 1
    assert {(e["mode"], e["index"], e["engine"]) for e in doc["events"]} == {("decode", 0, "1")}
    assert run.exit_code == 1 and "what:   decode_0_e1_r1" in run.diagnosis
