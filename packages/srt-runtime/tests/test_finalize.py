"""The plan's finalize steps (srt_runtime.finalize): they run after the benchmark, also when the
run aborts, after stopping what they name, with the flags the run's outcome adds; a failing
``fails_job`` step fails a run that had succeeded."""

from __future__ import annotations

from pathlib import Path

from rt_plans import execute, fake, plan, read_trace, spec

from srt_planner.plan import FinalizeStep
from srt_runtime.finalize import finalize_argv


def _step(trace: Path, name: str, code: int, **fields: object) -> FinalizeStep:
    # Records its own argv (the flags the run added) in the trace, then exits with ``code``.
    script = f'echo "{name} $*" >> {trace}; echo "{name} verdict"; exit {code}'
    return FinalizeStep(
        name=name,
        argv=("bash", "-c", script, name),
        log_file=f"{name}.out",
        **fields,  # type: ignore[arg-type]
    )


def test_the_flags_follow_the_outcome() -> None:
    step = FinalizeStep(
        name="s",
        argv=("tool", "finalize"),
        log_file="s.out",
        exited_watch=("a", "b"),
        exited_args=("--failed", "{name}"),
        interrupted_args=("--interrupted",),
        reap_forced_args=("--reap", "forced"),
    )
    assert finalize_argv(step, exited=set(), interrupted=False, benchmark_forced=False) == [
        "tool",
        "finalize",
    ]
    assert finalize_argv(step, exited={"b", "x"}, interrupted=True, benchmark_forced=True) == [
        "tool",
        "finalize",
        "--failed",
        "b",
        "--interrupted",
        "--reap",
        "forced",
    ]
    once = FinalizeStep(
        name="o", argv=("t",), log_file="o.out", exited_watch=("a", "b"), exited_args=("--x",)
    )
    assert finalize_argv(once, exited={"a", "b"}, interrupted=False, benchmark_forced=False) == [
        "t",
        "--x",
    ]


def test_a_failing_step_fails_a_run_whose_benchmark_passed(job_dir: Path, trace: Path) -> None:
    job_plan = plan(
        spec("exporter", fake("exit", 1), kind="service", phase="after_frontend", critical=False),
        spec(
            "collector",
            fake("trace", trace, "on-term", "forever"),
            kind="telemetry",
            phase="telemetry",
            critical=False,
        ),
        spec("benchmark", fake("sleep", 0.5, "exit", 0), kind="benchmark", phase="benchmark"),
        finalize=(
            _step(
                trace,
                "verdict",
                1,
                stop_first=("collector",),
                exited_watch=("exporter",),
                exited_args=("--exporter-exited",),
                interrupted_args=("--interrupted",),
                fails_job=True,
            ),
            _step(trace, "energy", 2),
        ),
    )
    run = execute(job_plan, job_dir)
    assert run.exit_code == 1
    # The collector was stopped before the step ran; the dead exporter added its flag; the run
    # was not aborted; a non-fatal step after it still ran.
    assert read_trace(trace) == [
        "collector start",
        "collector term",
        "verdict --exporter-exited",
        "energy ",
    ]
    assert "what:   verdict" in run.diagnosis
    assert "verdict exited with code 1: verdict verdict" in run.diagnosis
    assert run.stages[-1] == ("cleanup", "failed")


def test_an_aborted_run_still_finalizes_and_says_so(job_dir: Path, trace: Path) -> None:
    job_plan = plan(
        spec("worker", fake("sleep", 0.5, "exit", 3), role="decode"),
        spec(
            "benchmark",
            fake("trace", trace, "on-term", "forever"),
            kind="benchmark",
            phase="benchmark",
        ),
        finalize=(
            _step(
                trace,
                "verdict",
                0,
                interrupted_args=("--interrupted",),
                reap_forced_args=("--benchmark-reap", "forced"),
                fails_job=True,
            ),
        ),
    )
    run = execute(job_plan, job_dir)
    assert run.exit_code == 1
    assert "what:   worker" in run.diagnosis  # the first failure stays the run's failure
    assert read_trace(trace) == [
        "benchmark start",
        "benchmark term",
        "verdict --interrupted --benchmark-reap forced",
    ]
