"""The stages of a run, each a function over the supervisor (plan + launcher) and a status sink.

Processes come from the plan by ``ProcessSpec.phase``; within a phase, ``order`` groups start
together, and a group's readiness probes (and one-shot steps) are waited before the next group.
That is also how the planner expresses ``sequential_node_start`` (one ``order`` per batch).
"""

from __future__ import annotations

import itertools
from pathlib import Path

from srt_planner.plan import JobPlan, ProcessSpec, StartPhase
from srt_runtime.errors import StageError
from srt_runtime.files import write_atomic
from srt_runtime.health import wait_healthy
from srt_runtime.launch import resolve_log_path
from srt_runtime.probes import wait_ready
from srt_runtime.process import Proc, is_oneshot
from srt_runtime.progress import ProgressRelay
from srt_runtime.status import Stage, StatusSink
from srt_runtime.supervisor import Supervisor

__all__ = [
    "PHASE_STAGE",
    "group_phase",
    "run_benchmark",
    "run_health_gate",
    "run_phase",
    "run_post_eval",
    "wait_terminal",
    "write_generated_files",
]

#: The status stage reported for each start phase.
PHASE_STAGE: dict[StartPhase, Stage] = {
    "host_setup": "host_setup",
    "infra": "head_infrastructure",
    "before_workers": "before_workers",
    "workers": "workers",
    "frontends": "frontend",
    "after_frontend": "after_frontend",
    "telemetry": "telemetry",
    "benchmark": "benchmark",
    "post_eval": "post_eval",
}


def group_phase(plan: JobPlan, phase: StartPhase) -> list[list[ProcessSpec]]:
    """The phase's processes grouped by ``order`` (ascending; plan order within a group)."""
    specs = sorted((s for s in plan.processes if s.phase == phase), key=lambda s: s.order)
    return [list(g) for _, g in itertools.groupby(specs, key=lambda s: s.order)]


def write_generated_files(plan: JobPlan, log_dir: Path) -> None:
    """Write every ``GeneratedFile`` of the plan (nginx.conf, engine YAML, bench config...)."""
    for item in plan.files:
        path = resolve_log_path(log_dir, item.path)
        write_atomic(path, item.content.encode())
        path.chmod(item.mode)


def _wait_oneshots(sup: Supervisor, procs: list[Proc], phase: StartPhase, *, fatal: bool) -> None:
    failed: list[tuple[Proc, str]] = []
    for proc in procs:
        timeout = proc.spec.timeout_seconds
        if not sup.wait_for(proc.done.is_set, timeout):
            proc.stopping = True
            proc.handle.kill()
            proc.done.wait(10.0)
            failed.append((proc, f"timed out after {timeout:g} s and was killed"))
        elif proc.exit_code != 0:
            failed.append((proc, f"exited with code {proc.exit_code}"))
    blocking = [(p, why) for p, why in failed if fatal and p.spec.critical]
    for proc, why in failed:
        if (proc, why) not in blocking:
            sup.log.warning(
                "%s on %s %s (ignored); see %s", proc.spec.name, proc.node, why, proc.log_path
            )
    if blocking:
        nodes = ", ".join(dict.fromkeys(p.node for p, _ in blocking))
        details = "; ".join(f"{p.spec.name} {why}, see {p.log_path}" for p, why in blocking)
        raise StageError(
            f"{phase} failed on: {nodes} ({details})", process=blocking[0][0].spec.name
        )


def run_phase(sup: Supervisor, sink: StatusSink, phase: StartPhase, *, fatal: bool = True) -> None:
    """Start the phase's processes group by group, waiting for readiness and one-shots."""
    groups = group_phase(sup.plan, phase)
    if not groups:
        return
    sink.emit(PHASE_STAGE[phase], "running")
    for group in groups:
        procs = [sup.start(spec) for spec in group]
        for proc in procs:
            if not is_oneshot(proc.spec):
                wait_ready(sup, proc)
        _wait_oneshots(sup, [p for p in procs if is_oneshot(p.spec)], phase, fatal=fatal)
        sup.check()


def run_health_gate(sup: Supervisor, sink: StatusSink) -> None:
    if sup.plan.health.family == "none":
        return
    sink.emit("health", "running", f"waiting for {sup.plan.health.url}")
    wait_healthy(sup, sup.plan.health)


def run_benchmark(sup: Supervisor, sink: StatusSink) -> int | None:
    """Run the benchmark process(es) in order; the job's exit code, or None if there is none."""
    specs = [s for group in group_phase(sup.plan, "benchmark") for s in group]
    if not specs:
        return None
    sink.emit("benchmark", "running")
    code = 0
    for spec in specs:
        proc = sup.start(spec)
        relay = ProgressRelay(proc.log_path, sup.log)

        def finished(proc: Proc = proc, relay: ProgressRelay = relay) -> bool:
            relay.poll()
            return proc.done.is_set()

        sup.wait_for(finished, spec.timeout_seconds)
        relay.poll()
        if not proc.done.is_set():
            raise StageError(
                f"benchmark {spec.name} did not finish within "
                f"{spec.timeout_seconds:g} s; see {proc.log_path}",
                process=spec.name,
            )
        code = proc.exit_code if proc.exit_code is not None else 1
        sup.log.info("Benchmark %s exited with code %d", spec.name, code)
        if code != 0:
            break
    return code


def run_post_eval(sup: Supervisor, sink: StatusSink) -> None:
    """Post-benchmark evaluation: its failure is a warning, the benchmark result stands."""
    try:
        run_phase(sup, sink, "post_eval", fatal=False)
    except StageError as exc:
        sup.log.warning("post_eval failed (the benchmark result stands): %s", exc)


def wait_terminal(sup: Supervisor, sink: StatusSink) -> int | None:
    """Terminal services: wait until every one exited; the worst exit code (None: none)."""
    terminal = [p for p in sup.procs if p.spec.terminal]
    if not terminal:
        return None
    sink.emit("serving", "running", "waiting for terminal services")
    sup.wait_for(lambda: all(p.done.is_set() for p in terminal), None)
    codes = [p.exit_code if p.exit_code is not None else 1 for p in terminal]
    return max(codes, key=abs)
