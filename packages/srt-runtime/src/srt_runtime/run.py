"""One whole run: stages in order, then cleanup on every path, then the final record.

Order (docs/design.md#supervisor-stages): host_setup -> infra -> before_workers -> model_staging
(one-shots, every worker node at once) -> workers -> frontends -> health gate -> after_frontend ->
telemetry -> benchmark -> post_eval -> (terminal services wait / serving) -> finalize steps (power
telemetry's verdict, on every path) -> cleanup -> host teardown -> diagnosis -> lock, status.

A serving plan (``JobPlan.serve_only``: ``benchmark.type: manual`` or ``--serve-only``) has no
benchmark: after telemetry it serves until a stop (``srtctl cancel``, SIGTERM: status
``cancelled``; the time limit of a local run: ``timeout``; exit 1) or a critical failure
(``failed``, with the diagnosis).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import msgspec

from srt_planner.plan import JobPlan
from srt_runtime.cleanup import stop_all
from srt_runtime.clock import Clock
from srt_runtime.diagnosis import (
    TAIL_LINES,
    Failure,
    find_cause,
    read_tail,
    render_diagnosis,
    write_diagnosis_record,
)
from srt_runtime.errors import AbortError, LaunchError, StageError
from srt_runtime.finalize import run_finalize
from srt_runtime.launch import Launcher
from srt_runtime.lockfile import update_lockfile
from srt_runtime.scratch import prepare_scratch, remove_scratch
from srt_runtime.stages import (
    group_phase,
    run_benchmark,
    run_eval_only,
    run_health_gate,
    run_identity_check,
    run_phase,
    run_post_eval,
    run_serving,
    wait_terminal,
    write_generated_files,
)
from srt_runtime.status import Stage, StatusSink, StatusValue
from srt_runtime.supervisor import Supervisor
from srt_runtime.teardown import arm_teardown, run_teardown
from srt_schema.timestamps import iso_millis_offset

__all__ = ["RunResult", "run_job"]

_STOPPED = "supervisor"  # Failure.what of a run stopped by SIGTERM/SIGINT
#: Exit codes of a process that died of SIGTERM: from srun (128 + 15) or a subprocess (-15).
_SIGTERM_CODES = frozenset({128 + 15, -15})


def _ended_with_the_job(failure: Failure | None) -> bool:
    return failure is not None and failure.exit_code in _SIGTERM_CODES


class RunResult(msgspec.Struct, frozen=True, kw_only=True):
    exit_code: int
    failure: Failure | None = None
    #: The one-screen diagnosis (empty when the run succeeded).
    diagnosis: str = ""


class _StageTracker:
    """A StatusSink wrapper that remembers the stage the run is in (for the diagnosis)."""

    def __init__(self, inner: StatusSink) -> None:
        self.inner = inner
        self.stage: Stage = "starting"

    def emit(
        self, stage: Stage, status: StatusValue, message: str = "", exit_code: int | None = None
    ) -> None:
        self.stage = stage
        self.inner.emit(stage, status, message, exit_code)


def _stages(sup: Supervisor, sink: StatusSink, job_dir: Path) -> int:
    run_phase(sup, sink, "host_setup")
    run_phase(sup, sink, "infra")
    run_phase(sup, sink, "before_workers")
    run_phase(sup, sink, "model_staging")
    run_phase(sup, sink, "workers")
    run_phase(sup, sink, "frontends")
    run_health_gate(sup, sink)
    sup.log.info("Frontend: %s (model %s)", sup.plan.frontend_url, sup.plan.served_model_name)
    run_identity_check(sup, job_dir)
    run_phase(sup, sink, "after_frontend")
    run_phase(sup, sink, "telemetry")
    code = _finish(sup, sink)
    # A failure that arrived while the last wait was ending still fails the run.
    sup.process_events()
    sup.check()
    return code


def _finish(sup: Supervisor, sink: StatusSink) -> int:
    if sup.plan.eval_only:
        return run_eval_only(sup, sink)
    code = run_benchmark(sup, sink)
    if code == 0:
        run_post_eval(sup, sink)
    if code is not None:
        return code
    terminal = wait_terminal(sup, sink)
    if terminal is not None:
        return terminal
    if sup.plan.serve_only:
        run_serving(sup, sink)
    return 0


def _exit_culprit(sup: Supervisor, code: int) -> Failure | None:
    """For a non-zero exit without a failure: the benchmark (or terminal service) it came from."""
    if code == 0:
        return None
    result_phase = "post_eval" if sup.plan.eval_only else "benchmark"
    for proc in reversed(sup.procs):
        if (proc.spec.phase == result_phase or proc.spec.terminal) and proc.exit_code == code:
            what = {"benchmark": "the benchmark", "post_eval": "the eval-only evaluation"}.get(
                proc.spec.phase, "a terminal service"
            )
            return Failure(
                what=proc.spec.name,
                node=proc.node,
                exit_code=code,
                log_path=str(proc.log_path),
                reason=f"{what} {proc.spec.name} exited with code {code}; the job exits with it",
                detected_at=sup.clock.monotonic(),
            )
    return None


def _failure_from_stage(sup: Supervisor, exc: StageError | LaunchError, stage: str) -> Failure:
    blamed = exc.process if isinstance(exc, StageError) else None
    proc = next((p for p in sup.procs if p.spec.name == blamed), None)
    now = sup.clock.monotonic()
    if proc is None:
        return Failure(what=stage, reason=str(exc), detected_at=now)
    return Failure(
        what=proc.spec.name,
        node=proc.node,
        exit_code=proc.exit_code,
        log_path=str(proc.log_path),
        reason=str(exc),
        detected_at=now,
    )


def run_job(
    plan: JobPlan,
    launcher: Launcher,
    sink: StatusSink,
    *,
    job_dir: Path,
    clock: Clock,
    logger: logging.Logger | None = None,
    supervisor: Supervisor | None = None,
    before_final: Callable[[int], None] | None = None,
) -> RunResult:
    """Execute ``plan``; always cleans up; returns the exit code and the diagnosis.

    ``before_final(exit_code)`` runs after cleanup, teardown and the lockfile, just before the
    diagnosis is logged and the final status event is sent: the place for post-processing
    (dashboard, upload, analysis, srt_runtime.reporting.ReportingSession.finish). It must not
    raise.
    """
    log_dir = job_dir / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    sup = supervisor or Supervisor(plan, launcher, log_dir=log_dir, clock=clock, logger=logger)
    log = sup.log
    log.info(
        "Job %s (%s) on %s; launcher %s",
        plan.job_id,
        plan.job_name,
        ", ".join(plan.nodes),
        plan.launcher,
    )
    if plan.time_limit_seconds is not None:
        log.info("Time limit %s: the run stops there, as Slurm would", plan.time_limit)
    sink = _StageTracker(sink)
    sink.emit("starting", "running", f"Job started on {plan.node_roles.head}")
    update_lockfile(
        job_dir, job_id=plan.job_id, status="running", started_at=iso_millis_offset(clock.wall())
    )
    code = 1
    ended_normally = False
    armed = bool(group_phase(plan, "host_setup")) or bool(plan.teardown)
    guards = arm_teardown(sup) if armed else {}
    scratch = log_dir / plan.scratch if plan.scratch else None
    made = False  # only a scratch this run made is removed
    try:
        if scratch is not None:
            prepare_scratch(scratch, log)
            made = True
        write_generated_files(plan, log_dir)
        code = _stages(sup, sink, job_dir)
        ended_normally = True
    except AbortError:
        code = 1
    except (StageError, LaunchError) as exc:
        sup.fail(_failure_from_stage(sup, exc, f"stage {sink.stage}"))
        code = 1
    finally:
        interrupted = sink.stage
        sink.emit("cleanup", "running")
        finalized = run_finalize(sup, interrupted=not ended_normally or sup.stop_reason is not None)
        stop_all(sup)
        if armed:
            run_teardown(sup, guards)
        if scratch is not None and made:
            remove_scratch(scratch, log)
        sup.close()
    if sup.stop_reason is not None and _ended_with_the_job(sup.failure):
        # scancel and the time limit signal every step and this supervisor at once: a process
        # that died of that SIGTERM before our handler ran is part of the stop, not its cause.
        assert sup.failure is not None
        log.warning("%s: ended by the same stop (%s)", sup.failure.reason, sup.stop_reason)
        sup.failure = None
    if sup.failure is None and sup.stop_reason is not None:
        sup.fail(
            Failure(
                what=_STOPPED,
                reason=f"stopped: {sup.stop_reason} during stage {interrupted}",
                detected_at=clock.monotonic(),
            )
        )
    if finalized is not None and sup.failure is None:
        # Power telemetry that was required and is not publishable (or broke): 0 -> 1 only.
        sup.fail(finalized)
    if sup.failure is not None:
        code = 1
    if sup.restarts.doc.endpoints:
        log.info("%s", sup.restarts.summary())
    diagnosis = ""
    shown = sup.failure if sup.failure is not None else _exit_culprit(sup, code)
    if shown is not None:
        tail = read_tail(Path(shown.log_path), TAIL_LINES) if shown.log_path else []
        cause = find_cause(shown, tail)
        diagnosis = render_diagnosis(shown, tail, cause)
        try:  # the same facts as data, for the final status event and the S3 upload
            write_diagnosis_record(log_dir, shown, tail, cause)
        except OSError as exc:
            log.warning("Diagnosis not written to %s: %s", log_dir, exc)
    status: StatusValue = "completed" if code == 0 else "failed"
    if sup.stop_reason is not None and sup.failure is not None and sup.failure.what == _STOPPED:
        status = "timeout" if sup.timed_out else "cancelled"
    update_lockfile(
        job_dir,
        job_id=plan.job_id,
        exit_code=code,
        status=status,
        finished_at=iso_millis_offset(clock.wall()),
        worker_restarts=sup.restarts.to_builtins(),
    )
    if before_final is not None:
        before_final(code)
    if diagnosis:
        # Last, after post-processing, so the diagnosis ends stdout and the sweep log.
        log.error("%s", diagnosis)
    message = sup.failure.reason if sup.failure is not None else ""
    sink.emit("cleanup", status, message, code)
    return RunResult(exit_code=code, failure=sup.failure, diagnosis=diagnosis)
