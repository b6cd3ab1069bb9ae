"""Serving plans (``benchmark.type: manual``, ``srtctl apply --serve-only``) and
``benchmark.stream_output``, with the LocalLauncher and scripted processes."""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from rt_fakes import FakeClock
from rt_plans import (
    Run,
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

from srt_planner.plan import HealthGate, JobPlan
from srt_runtime.progress import MIRROR_PREFIX
from srt_runtime.supervisor import Supervisor

#: How long the serving job is watched after its gate before it is stopped.
SERVE_SECONDS = 3.0


def _serving_plan(
    tmp_path: Path, trace: Path, *, worker: tuple[str, ...] = (), **fields: Any
) -> JobPlan:
    port = free_port()
    ready = {"instances": [{"component": "backend", "endpoint": "generate"}]}
    routes = write_routes(
        tmp_path / "routes.json",
        {"/health": [200, ready], "/v1/models": [200, {"data": [{"id": "test-model"}]}]},
    )
    return plan(
        spec(
            "service_etcd",
            fake("trace", trace, "on-term", "forever"),
            kind="service",
            phase="infra",
            stop_tier=2,
        ),
        spec("agg_0", worker or fake("trace", trace, "on-term", "forever"), role="agg"),
        spec(
            "frontend_0",
            fake("trace", trace, "on-term", "http", port, routes, "forever"),
            kind="frontend",
            phase="frontends",
        ),
        health=HealthGate(
            family="dynamo",
            url=f"http://127.0.0.1:{port}/health",
            expected_decode=1,
            max_attempts=100,
            interval_seconds=1.0,
        ),
        serve_only=True,
        frontend_url=f"http://127.0.0.1:{port}",
        **fields,
    )


def _status(job_dir: Path) -> dict[str, Any]:
    try:
        doc = json.loads((job_dir / "status.json").read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return {}
    assert isinstance(doc, dict)
    return doc


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


class _Background:
    """``execute(plan)`` on a thread; ``sup`` is the run's supervisor once it started."""

    def __init__(self, job_plan: JobPlan, job_dir: Path, clock: Any = None) -> None:
        self.sup: Supervisor | None = None
        self.run: Run | None = None

        def on_status(sup: Supervisor, _stage: str, _status: str) -> None:
            self.sup = sup

        def target() -> None:
            self.run = execute(job_plan, job_dir, clock=clock, on_status=on_status)

        self.thread = threading.Thread(target=target, daemon=True)
        self.thread.start()

    def finish(self, timeout: float = 60.0) -> Run:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the run did not end"
        assert self.run is not None
        return self.run


def _wait_stage(job_dir: Path, stage: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while _status(job_dir).get("stage") != stage:
        # hang guard: the caller's timeout (30 s) for a stage reached in about a second
        assert time.monotonic() < deadline, f"never reached stage {stage}: {_status(job_dir)}"
        time.sleep(0.05)


def test_manual_plan_serves_until_stopped(tmp_path: Path, job_dir: Path, trace: Path) -> None:
    job_plan = _serving_plan(tmp_path, trace)
    background = _Background(job_plan, job_dir)
    _wait_stage(job_dir, "serving")
    time.sleep(SERVE_SECONDS)

    # SERVE_SECONDS after the gate (this test's own sleep): still serving, every process up,
    # the frontend answers.
    status = _status(job_dir)
    assert (status["stage"], status["status"]) == ("serving", "running")
    assert (
        status["message"] == f"serving {job_plan.frontend_url} until cancelled (srtctl cancel 4242)"
    )
    sup = background.sup
    assert sup is not None
    assert sorted(p.spec.name for p in sup.procs) == ["agg_0", "frontend_0", "service_etcd"]
    pids = [p.handle.pid for p in sup.procs]
    assert all(_alive(pid) for pid in pids)
    with urllib.request.urlopen(f"{job_plan.frontend_url}/v1/models", timeout=5) as answer:
        assert json.load(answer) == {"data": [{"id": "test-model"}]}

    sup.request_stop("received SIGTERM")  # what the SIGTERM handler does
    run = background.finish()

    assert run.exit_code == 1
    assert run.stages[-2:] == [("cleanup", "running"), ("cleanup", "cancelled")]
    assert run.events[-1]["message"] == "stopped: received SIGTERM during stage serving"
    assert sorted(line for line in read_trace(trace) if line.endswith(" term")) == [
        "agg_0 term",
        "frontend_0 term",
        "service_etcd term",
    ]
    assert not [pid for pid in pids if _alive(pid)]
    for pid in pids:  # nothing any of them started is left in their process groups
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            continue
        raise AssertionError(f"process group {pid} still has members")
    sweep = sweep_log(job_dir).read_text()
    assert (
        f"INFO Serving test-model at {job_plan.frontend_url} until the job is cancelled or its "
        "time limit; stop it with: srtctl cancel 4242"
    ) in sweep


def test_a_local_run_stops_at_its_time_limit_like_slurm(
    tmp_path: Path, job_dir: Path, trace: Path
) -> None:
    # A one-minute limit on the injected clock: the run serves, then the limit stops it.
    job_plan = _serving_plan(tmp_path, trace, time_limit_seconds=60, time_limit="00:01:00")
    clock = FakeClock()
    background = _Background(job_plan, job_dir, clock)
    run = background.finish(timeout=120.0)  # hang guard: the fake minute passes in ~1 s

    assert clock.monotonic() >= 1000.0 + 60  # the fake clock's start + the limit
    assert run.exit_code == 1
    assert ("serving", "running") in run.stages
    assert run.stages[-2:] == [("cleanup", "running"), ("cleanup", "timeout")]
    assert run.events[-1]["message"] == "stopped: time limit 00:01:00 reached during stage serving"
    # every process was stopped by the tiered cleanup, as on a cancel
    assert sorted(line for line in read_trace(trace) if line.endswith(" term")) == [
        "agg_0 term",
        "frontend_0 term",
        "service_etcd term",
    ]
    sup = background.sup
    assert sup is not None and sup.timed_out
    assert not [p for p in sup.procs if _alive(p.handle.pid)]
    assert _status(job_dir)["status"] == "timeout"
    sweep = sweep_log(job_dir).read_text()
    assert "Time limit 00:01:00: the run stops there, as Slurm would" in sweep


def test_a_worker_that_dies_while_serving_fails_the_job(
    tmp_path: Path, job_dir: Path, trace: Path
) -> None:
    serving = awaits(sweep_log(job_dir), "INFO Serving test-model")
    worker = fake("trace", trace, "on-term", *serving, "sleep", 1, "exit", 3)
    run = execute(_serving_plan(tmp_path, trace, worker=worker), job_dir)

    assert run.exit_code == 1
    assert run.stages[-1] == ("cleanup", "failed")
    assert ("serving", "running") in run.stages
    assert run.diagnosis.splitlines()[1:3] == ["RUN FAILED", "  what:   agg_0"]
    assert "agg_0 (worker agg) on node-01 exited with code 3" in run.diagnosis


def _bench_plan(tmp_path: Path, *, stream: bool) -> JobPlan:
    # Hex-encoded so the words are not also in the "Starting benchmark ..." line of the log.
    output = b"first line\n[srt-bench] concurrency 4: warmup\n\nlast line without newline"
    bench = spec(
        "benchmark",
        fake("raw", output.hex(), "exit", 0),
        kind="benchmark",
        phase="benchmark",
        log_file="benchmark.out",
        oneshot=True,
    )
    return plan(bench, stream_benchmark_output=stream)


def test_stream_output_mirrors_benchmark_out(tmp_path: Path) -> None:
    streamed = tmp_path / "streamed" / "4242"
    quiet = tmp_path / "quiet" / "4242"
    for folder in (streamed, quiet):
        (folder / "logs").mkdir(parents=True)

    on = execute(_bench_plan(tmp_path, stream=True), streamed)
    off = execute(_bench_plan(tmp_path, stream=False), quiet)

    assert (on.exit_code, off.exit_code) == (0, 0)
    relayed = [
        line.removeprefix("INFO ")
        for line in sweep_log(streamed).read_text().splitlines()
        if MIRROR_PREFIX in line or "[srt-bench]" in line
    ]
    assert relayed == [
        f"{MIRROR_PREFIX}first line",
        "[srt-bench] concurrency 4: warmup",
        MIRROR_PREFIX,  # the empty line
        f"{MIRROR_PREFIX}last line without newline",
    ]
    quiet_log = sweep_log(quiet).read_text()
    assert MIRROR_PREFIX not in quiet_log
    assert "first line" not in quiet_log
    assert "INFO [srt-bench] concurrency 4: warmup" in quiet_log  # progress is always relayed
    # The log file itself is kept as the client wrote it.
    assert (streamed / "logs" / "benchmark.out").read_bytes() == (
        quiet / "logs" / "benchmark.out"
    ).read_bytes()
