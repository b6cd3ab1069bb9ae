"""The plan's finalize steps (``JobPlan.finalize``): after the benchmark, before the cleanup.

Power telemetry's verdict needs the collectors stopped (their last, bracketing sample) while the
exporters still run, and it must be written on every path: a benchmark that failed, a critical
process that died, ``srtctl cancel``, the time limit. So ``run_job`` calls :func:`run_finalize`
first thing in its cleanup, on every path. Each step's ``stop_first`` processes are stopped
gracefully, then the step runs as this supervisor's own subprocess on the head node (not an
``srun`` step: a cancelled job can start none), with the flags its plan entry says the run's
outcome adds. A ``fails_job`` step that exits non-zero is the run's failure if it has none yet
(the job's exit code only ever goes 0 -> 1 this way).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from srt_planner.plan import FinalizeStep
from srt_runtime.cleanup import stop_group
from srt_runtime.diagnosis import Failure, read_tail
from srt_runtime.launch import build_env, build_local_argv, resolve_log_path
from srt_runtime.process import Proc
from srt_runtime.supervisor import Supervisor

__all__ = ["finalize_argv", "run_finalize"]


def finalize_argv(
    step: FinalizeStep, *, exited: set[str], interrupted: bool, benchmark_forced: bool
) -> list[str]:
    """The step's command line for this run's outcome (pure)."""
    argv = list(step.argv)
    if any("{name}" in arg for arg in step.exited_args):
        for name in step.exited_watch:
            if name in exited:
                argv += [arg.replace("{name}", name) for arg in step.exited_args]
    elif any(name in exited for name in step.exited_watch):
        argv += step.exited_args
    if interrupted:
        argv += step.interrupted_args
    if benchmark_forced:
        argv += step.reap_forced_args
    return argv


def _exited_on_their_own(sup: Supervisor) -> set[str]:
    """Processes (by plan name; a relaunch counts for its base) that ended without being asked."""
    return {p.base.name for p in sup.procs if p.done.is_set() and not p.stopping}


def _run_step(sup: Supervisor, step: FinalizeStep, argv: list[str]) -> tuple[int | None, Path]:
    log_path = resolve_log_path(sup.log_dir, step.log_file)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    program = build_local_argv(tuple(argv), sys.executable, ())
    env = build_env(os.environ, {}, sys.executable)
    sup.log.info("Finalize: %s", " ".join(argv))
    try:
        with log_path.open("ab") as log:
            done = subprocess.run(
                program,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=sup.log_dir,
                timeout=step.timeout_seconds,
                check=False,
            )
    except subprocess.TimeoutExpired:
        sup.log.error(
            "%s did not finish within %g s and was killed; see %s",
            step.name,
            step.timeout_seconds,
            log_path,
        )
        return None, log_path
    except OSError as exc:
        with log_path.open("a") as log:
            log.write(f"cannot start {program[0]!r}: {exc.strerror}\n")
        return 127, log_path
    return done.returncode, log_path


def run_finalize(sup: Supervisor, *, interrupted: bool) -> Failure | None:
    """Run every finalize step in order; the failure a ``fails_job`` step makes, if any.
    Never raises."""
    steps = sup.plan.finalize
    if not steps:
        return None
    # From here on, exits are the cleanup's doing: no failure detection, no restarts.
    sup.cleaning = True
    exited = _exited_on_their_own(sup)
    benchmarks: list[Proc] = [
        p for p in sup.running() if p.spec.kind == "benchmark" and not p.done.is_set()
    ]
    if benchmarks:
        # The windows are the client's: it stops (and writes what it measured) first.
        stop_group(sup, benchmarks)
    failure: Failure | None = None
    for step in steps:
        stopping = [p for p in sup.running() if p.base.name in step.stop_first]
        if stopping:
            stop_group(sup, stopping)
        argv = finalize_argv(
            step, exited=exited, interrupted=interrupted, benchmark_forced=bool(benchmarks)
        )
        code, log_path = _run_step(sup, step, argv)
        if code == 0:
            continue
        tail = read_tail(log_path, 5)
        last = tail[-1].strip() if tail else ""
        why = "timed out" if code is None else f"exited with code {code}"
        if not step.fails_job:
            sup.log.warning("%s %s (ignored): %s; see %s", step.name, why, last, log_path)
            continue
        sup.log.error("%s %s: %s; see %s", step.name, why, last, log_path)
        if failure is None:
            failure = Failure(
                what=step.name,
                node=sup.plan.node_roles.head,
                exit_code=code,
                log_path=str(log_path),
                reason=f"{step.name} {why}: {last}" if last else f"{step.name} {why}",
                detected_at=sup.clock.monotonic(),
            )
    return failure
