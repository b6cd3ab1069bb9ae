"""scancel (and the time limit) signal every step and the supervisor at once: a step that dies of
that SIGTERM before the supervisor's own handler runs is part of the stop, not its cause, and
the run ends ``cancelled`` (exit 1) with the stop as its diagnosis."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from rt_plans import execute, fake, plan, spec

from srt_runtime.supervisor import Supervisor


def _plan(trace: Path):
    return plan(
        spec("agg_0", fake("trace", trace, "forever"), role="agg"),
        spec("benchmark", fake("on-term", "forever"), kind="benchmark", phase="benchmark"),
    )


def _kill_then_stop(sig: signal.Signals):
    """Kill agg_0 with ``sig`` once the benchmark runs; the supervisor's own SIGTERM arrives
    while it is already cleaning up after that death (the order scancel produces)."""

    def on_status(sup: Supervisor, stage: str, status: str) -> None:
        if (stage, status) == ("benchmark", "running"):
            (worker,) = [p for p in sup.procs if p.spec.name == "agg_0"]
            os.kill(worker.handle.pid, sig)
        elif (stage, status) == ("cleanup", "running"):
            assert sup.failure is not None and sup.failure.what == "agg_0"
            sup.request_stop("received SIGTERM")

    return on_status


def test_a_step_killed_by_the_same_sigterm_is_not_blamed(job_dir: Path, trace: Path) -> None:
    run = execute(_plan(trace), job_dir, on_status=_kill_then_stop(signal.SIGTERM))

    assert run.exit_code == 1
    assert run.stages[-1] == ("cleanup", "cancelled")
    assert run.diagnosis.splitlines()[1:4] == [
        "RUN FAILED",
        "  what:   supervisor",
        "  reason: stopped: received SIGTERM during stage benchmark",
    ]
    assert "agg_0 (worker agg) on node-01 exited with code -15: ended by the same stop" in (
        run.log("sweep_4242.log")
    )


def test_a_step_that_died_of_something_else_is_still_the_cause(job_dir: Path, trace: Path) -> None:
    run = execute(_plan(trace), job_dir, on_status=_kill_then_stop(signal.SIGKILL))

    assert run.exit_code == 1
    assert run.stages[-1] == ("cleanup", "failed")
    assert run.diagnosis.splitlines()[2:5] == [
        "  what:   agg_0",
        "  node:   node-01",
        "  exit:   killed by signal 9",
    ]
