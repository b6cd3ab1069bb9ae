"""The post_eval stage: RUN_EVAL after a benchmark that exited 0 (a failure only warns) and
EVAL_ONLY instead of the benchmark (its exit code is the job's), docs/telemetry-and-bench.md
docs/telemetry-and-bench.md#post-eval, with scripted processes and the LocalLauncher."""

from __future__ import annotations

from pathlib import Path

from rt_fakes import FakeClock
from rt_plans import execute, fake, free_port, plan, read_trace, spec, sweep_log

from srt_planner.plan import JobPlan, ProcessSpec


def _frontend(port: int, trace: Path) -> ProcessSpec:
    """A public endpoint that accepts TCP connections (what the RUN_EVAL check needs)."""
    return spec(
        "frontend_0",
        fake("trace", trace, "on-term", "tcp", port, "forever"),
        kind="frontend",
        phase="frontends",
    )


def _eval(trace: Path, *steps: object, critical: bool = False) -> ProcessSpec:
    return spec(
        "post_eval",
        fake("trace", trace, "say", "eval running", *steps),
        kind="benchmark",
        phase="post_eval",
        role="eval",
        log_file="eval.out",
        oneshot=True,
        critical=critical,
    )


def _run_eval_plan(trace: Path, eval_exit: int, *, bench_exit: int = 0) -> JobPlan:
    port = free_port()
    return plan(
        _frontend(port, trace),
        spec(
            "benchmark",
            fake("trace", trace, "exit", bench_exit),
            kind="benchmark",
            phase="benchmark",
            oneshot=True,
        ),
        _eval(trace, "exit", eval_exit),
        frontend_url=f"http://127.0.0.1:{port}",
    )


def test_run_eval_runs_after_the_benchmark_and_the_job_keeps_its_result(
    job_dir: Path, trace: Path
) -> None:
    run = execute(_run_eval_plan(trace, 0), job_dir)
    assert run.exit_code == 0
    starts = [line for line in read_trace(trace) if not line.endswith(" term")]
    # The frontend has no readiness probe, so only the benchmark -> eval order is fixed.
    assert sorted(starts) == ["benchmark start", "frontend_0 start", "post_eval start"]
    assert starts.index("benchmark start") < starts.index("post_eval start")
    assert ("post_eval", "running") in run.stages
    assert run.stages.index(("benchmark", "running")) < run.stages.index(("post_eval", "running"))
    assert "eval running" in run.log("eval.out")


def test_a_failing_run_eval_only_warns(job_dir: Path, trace: Path) -> None:
    run = execute(_run_eval_plan(trace, 4), job_dir)
    assert run.exit_code == 0
    assert run.diagnosis == ""
    assert (
        "WARNING post_eval exited with code 4 (the benchmark result stands); see "
        f"{job_dir / 'logs' / 'eval.out'}"
    ) in sweep_log(job_dir).read_text()
    assert run.stages[-1] == ("cleanup", "completed")


def test_run_eval_is_skipped_after_a_failed_benchmark(job_dir: Path, trace: Path) -> None:
    run = execute(_run_eval_plan(trace, 0, bench_exit=3), job_dir)
    assert run.exit_code == 3
    assert "post_eval start" not in read_trace(trace)


def test_run_eval_is_skipped_when_the_endpoint_does_not_accept_connections(
    job_dir: Path, trace: Path
) -> None:
    closed = free_port()
    job_plan = plan(
        spec("benchmark", fake("exit", 0), kind="benchmark", phase="benchmark", oneshot=True),
        _eval(trace, "exit", 0),
        frontend_url=f"http://127.0.0.1:{closed}",
    )
    clock = FakeClock()
    run = execute(job_plan, job_dir, clock=clock)
    assert run.exit_code == 0
    assert not trace.exists() or "post_eval start" not in read_trace(trace)
    assert (
        f"WARNING post_eval skipped: http://127.0.0.1:{closed} did not accept a connection "
        "within 30 s (the benchmark result stands)"
    ) in sweep_log(job_dir).read_text()
    assert clock.waited >= 30


def test_eval_only_replaces_the_benchmark_and_its_exit_code_is_the_jobs(
    job_dir: Path, trace: Path
) -> None:
    port = free_port()
    job_plan = plan(
        _frontend(port, trace),
        _eval(trace, "exit", 5, critical=True),
        frontend_url=f"http://127.0.0.1:{port}",
        eval_only=True,
    )
    run = execute(job_plan, job_dir)
    assert run.exit_code == 5
    post_eval = [e for e in run.events if e["stage"] == "post_eval"]
    assert [(e["status"], e["message"]) for e in post_eval] == [
        ("running", "Running eval-only evaluation")
    ]
    assert "benchmark" not in [e["stage"] for e in run.events]
    assert "post_eval exited with code 5" in sweep_log(job_dir).read_text()
    assert run.diagnosis.splitlines()[2] == "  what:   post_eval"


def test_eval_only_without_an_eval_process_fails_the_stage(job_dir: Path) -> None:
    run = execute(plan(spec("agg_0", fake("on-term", "forever")), eval_only=True), job_dir)
    assert run.exit_code == 1
    assert run.events[-1]["message"] == "EVAL_ONLY is set but the plan has no post_eval process"
