"""Host teardown (``host_setup.teardown``) that also runs when Slurm cancels the job.

A cancelled job (``scancel``, the time limit) cannot start new steps: Slurm refuses ``srun`` once
the job is ending ("Slurm job N has expired"). So on the Slurm launcher each teardown step is
started *armed* at the beginning of the run: the step's task waits for SIGTERM and then runs the
teardown command. Slurm's cancellation sends SIGTERM to every step, so the teardown runs even
then (within Slurm's ``KillWait``); on a normal end the supervisor sends the SIGTERM itself
(``scancel --signal=TERM`` of the step) and waits for the teardown's exit. The local launcher
(and a plan whose step line has no recognisable task) runs the teardown at cleanup as before.
"""

from __future__ import annotations

import signal

import msgspec

from srt_planner.plan import ProcessSpec
from srt_runtime.errors import SupervisorError
from srt_runtime.launch import Handle
from srt_runtime.supervisor import Supervisor

__all__ = ["ARMED_SCRIPT", "arm_teardown", "armed_spec", "run_teardown"]

#: ``bash -c ARMED_SCRIPT srt-teardown <task...>``: sleep until SIGTERM/SIGINT, then run the task
#: once (later signals are ignored) and exit with its code.
ARMED_SCRIPT = (
    'trap \'trap "" TERM INT; kill "$sleeper" 2>/dev/null; "$@"; exit $?\' TERM INT; '
    'while :; do sleep 86400 & sleeper=$!; wait "$sleeper"; done'
)
_ARMED = ("bash", "-c", ARMED_SCRIPT, "srt-teardown")
_KILL_WAIT = 10.0
_DEFAULT_TIMEOUT = 300.0


def _task_start(srun_argv: tuple[str, ...]) -> int | None:
    """Where the task begins in a rendered srun line: after ``--job-name=`` (and ``--export=``)."""
    for index, arg in enumerate(srun_argv):
        if arg.startswith("--job-name="):
            after = index + 1
            if after < len(srun_argv) and srun_argv[after].startswith("--export="):
                after += 1
            return after if after < len(srun_argv) else None
    return None


def armed_spec(spec: ProcessSpec) -> ProcessSpec | None:
    """``spec`` whose task first waits for SIGTERM; None when its srun line cannot be split."""
    if not spec.srun_argv:
        return msgspec.structs.replace(spec, argv=(*_ARMED, *spec.argv))
    start = _task_start(spec.srun_argv)
    if start is None:
        return None
    srun_argv = (*spec.srun_argv[:start], *_ARMED, *spec.srun_argv[start:])
    return msgspec.structs.replace(spec, srun_argv=srun_argv)


def arm_teardown(sup: Supervisor) -> dict[str, Handle]:
    """On the Slurm launcher, start every teardown step armed; {step name: handle}."""
    armed: dict[str, Handle] = {}
    if sup.plan.launcher != "slurm":
        return armed
    for spec in sup.plan.teardown:
        waiting = armed_spec(spec)
        if waiting is None:
            continue
        try:
            armed[spec.name] = sup.launcher.start(waiting)
        except SupervisorError as exc:
            sup.log.warning("host teardown %s could not be armed: %s", spec.name, exc)
    return armed


def run_teardown(sup: Supervisor, armed: dict[str, Handle]) -> None:
    """Run the plan's host teardown steps in parallel; failures are logged, never raised.

    Armed steps are triggered with SIGTERM, unless the run was stopped by a signal: under Slurm
    that signal (scancel, time limit) reached every step at once and the teardown already runs
    (signalling the step again could abort it)."""
    started: list[tuple[ProcessSpec, Handle]] = []
    for spec in sup.plan.teardown:
        handle = armed.get(spec.name)
        if handle is not None:
            if sup.stop_reason is None:
                handle.signal(signal.SIGTERM)
            started.append((spec, handle))
            continue
        try:
            started.append((spec, sup.launcher.start(spec)))
        except SupervisorError as exc:
            sup.log.warning("host teardown %s could not start: %s", spec.name, exc)
    for spec, handle in started:
        code = handle.wait(spec.timeout_seconds or _DEFAULT_TIMEOUT)
        if code is None:
            handle.kill()
            handle.wait(_KILL_WAIT)
            sup.log.warning(
                "host teardown %s on %s timed out after %g s",
                spec.name,
                spec.nodes[0],
                spec.timeout_seconds or _DEFAULT_TIMEOUT,
            )
        elif code != 0:
            sup.log.warning(
                "host teardown %s on %s exited with code %d", spec.name, spec.nodes[0], code
            )
        else:
            sup.log.info("host teardown %s on %s done", spec.name, spec.nodes[0])
        handle.release()
