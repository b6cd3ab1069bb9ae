"""The stages of a run, each a function over the supervisor (plan + launcher) and a status sink.

Processes come from the plan by ``ProcessSpec.phase``; within a phase, ``order`` groups start
together, and a group's readiness probes (and one-shot steps) are waited before the next group.
That is also how the planner expresses ``sequential_node_start`` (one ``order`` per batch).
"""

from __future__ import annotations

import itertools
import logging
from functools import partial
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from srt_planner.plan import JobPlan, ProcessSpec, StartPhase, TcpProbe
from srt_runtime.errors import StageError
from srt_runtime.files import write_atomic
from srt_runtime.health import wait_healthy
from srt_runtime.launch import resolve_log_path
from srt_runtime.lockfile import update_lockfile
from srt_runtime.probe_check import check_probe
from srt_runtime.probes import wait_ready
from srt_runtime.process import Proc, is_oneshot
from srt_runtime.progress import ProgressRelay
from srt_runtime.reporting.fingerprint import capture_script
from srt_runtime.reporting.identity import (
    ObservedIdentity,
    Verification,
    observed_from_fingerprint,
    read_framework_versions,
    render_banner,
    verify_identity,
)
from srt_runtime.reporting.lock_sections import (
    build_lock_sections,
    first_fingerprint,
    read_fingerprints,
)
from srt_runtime.status import Stage, StatusSink
from srt_runtime.supervisor import Supervisor

__all__ = [
    "PHASE_STAGE",
    "group_phase",
    "run_benchmark",
    "run_eval_only",
    "run_health_gate",
    "run_identity_check",
    "run_phase",
    "run_post_eval",
    "run_serving",
    "wait_terminal",
    "write_generated_files",
]

#: The status stage reported for each start phase.
PHASE_STAGE: dict[StartPhase, Stage] = {
    "host_setup": "host_setup",
    "infra": "head_infrastructure",
    "before_workers": "before_workers",
    # Still before any worker: reported as part of the services' stage.
    "model_staging": "before_workers",
    "workers": "workers",
    "frontends": "frontend",
    "after_frontend": "after_frontend",
    "telemetry": "telemetry",
    "benchmark": "benchmark",
    "post_eval": "post_eval",
}


#: How a phase is named in a stage failure ("model staging failed on: ..."); default: the phase.
_PHASE_WORDS: dict[StartPhase, str] = {"model_staging": "model staging"}


def group_phase(plan: JobPlan, phase: StartPhase) -> list[list[ProcessSpec]]:
    """The phase's processes grouped by ``order`` (ascending; plan order within a group)."""
    specs = sorted((s for s in plan.processes if s.phase == phase), key=lambda s: s.order)
    return [list(g) for _, g in itertools.groupby(specs, key=lambda s: s.order)]


def write_generated_files(plan: JobPlan, log_dir: Path) -> None:
    """Write every ``GeneratedFile`` of the plan (nginx.conf, engine YAML, bench config...) and
    the fingerprint capture script the worker preambles run."""
    for item in plan.files:
        path = resolve_log_path(log_dir, item.path)
        write_atomic(path, item.content.encode())
        path.chmod(item.mode)
    if plan.fingerprint_script is not None:
        write_atomic(resolve_log_path(log_dir, plan.fingerprint_script), capture_script().encode())


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
            f"{_PHASE_WORDS.get(phase, phase)} failed on: {nodes} ({details})",
            process=blocking[0][0].spec.name,
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
    sup.check_gate_owner()


def run_identity_check(sup: Supervisor, job_dir: Path) -> Verification | None:
    """After the health gate: the recipe's ``identity`` against the first worker fingerprint
    (docs/telemetry-and-bench.md#identity-and-fingerprints). Only ever warns; the result goes to the
    sweep log and to ``recipe.lock.yaml`` as ``lock.verification``."""
    declared = sup.plan.identity
    if declared is None:
        return None
    fingerprint = first_fingerprint(read_fingerprints(sup.log_dir))
    if fingerprint is not None:
        seen = observed_from_fingerprint(fingerprint)
    elif sup.plan.container_runtime == "none":
        # No worker fingerprint, but the workers run in this interpreter's environment.
        seen = ObservedIdentity(frameworks=read_framework_versions(declared.frameworks))
    else:
        seen = ObservedIdentity()
    verification = verify_identity(declared, seen)
    if verification is None:
        return None
    level = logging.WARNING if verification.failed else logging.INFO
    for line in render_banner(verification):
        sup.log.log(level, "%s", line)
    try:
        update_lockfile(job_dir, **build_lock_sections(verification=verification))
    except (OSError, yaml.YAMLError) as exc:
        sup.log.warning("Identity verification not recorded in recipe.lock.yaml: %s", exc)
    return verification


def _run_to_completion(sup: Supervisor, specs: list[ProcessSpec], *, mirror: bool = False) -> int:
    """Run one-shot ``specs`` in order, relaying their progress lines (``mirror``: every line of
    their logs); the first non-zero exit code (or 0). A step that outlives its
    ``timeout_seconds`` fails the stage."""
    code = 0
    for spec in specs:
        proc = sup.start(spec)
        events = sup.events
        relay = ProgressRelay(
            proc.log_path,
            sup.log,
            mirror=mirror,
            on_progress=None if events is None else partial(events.progress, spec.name),
        )

        def finished(proc: Proc = proc, relay: ProgressRelay = relay) -> bool:
            relay.poll()
            return proc.done.is_set()

        try:
            sup.wait_for(finished, spec.timeout_seconds)
        finally:
            # Also when the run aborts mid-benchmark: what the client printed so far is shown.
            relay.flush()
        if not proc.done.is_set():
            raise StageError(
                f"{spec.kind} {spec.name} did not finish within "
                f"{spec.timeout_seconds:g} s; see {proc.log_path}",
                process=spec.name,
            )
        code = proc.exit_code if proc.exit_code is not None else 1
        sup.log.info("%s exited with code %d", spec.name, code)
        if code != 0:
            break
    return code


def run_benchmark(sup: Supervisor, sink: StatusSink) -> int | None:
    """Run the benchmark process(es) in order; the job's exit code, or None if there is none."""
    specs = [s for group in group_phase(sup.plan, "benchmark") for s in group]
    if not specs:
        return None
    sink.emit("benchmark", "running")
    return _run_to_completion(sup, specs, mirror=sup.plan.stream_benchmark_output)


def run_eval_only(sup: Supervisor, sink: StatusSink) -> int:
    """EVAL_ONLY: the ``post_eval`` process instead of a benchmark; its exit code is the job's."""
    specs = [s for group in group_phase(sup.plan, "post_eval") for s in group]
    if not specs:
        raise StageError("EVAL_ONLY is set but the plan has no post_eval process")
    sink.emit("post_eval", "running", "Running eval-only evaluation")
    return _run_to_completion(sup, specs)


#: RUN_EVAL: how long the public endpoint may take to accept a connection before the eval.
EVAL_REACH_SECONDS = 30.0


def _endpoint_reachable(sup: Supervisor, url: str, timeout: float) -> bool:
    parts = urlsplit(url)
    probe = TcpProbe(
        host=parts.hostname or "127.0.0.1",
        port=parts.port or 80,
        timeout_seconds=timeout,
        interval_seconds=0.5,
    )
    # A TCP probe reads no log; the path argument is only used by log probes.
    return sup.wait_for(lambda: check_probe(probe, sup.log_dir), timeout)


def run_post_eval(sup: Supervisor, sink: StatusSink) -> None:
    """RUN_EVAL, after a benchmark that exited 0: a quick TCP check of the public endpoint, then
    the eval; a failure of either is a warning and the benchmark result stands."""
    specs = [s for group in group_phase(sup.plan, "post_eval") for s in group]
    if not specs:
        return
    if not _endpoint_reachable(sup, sup.plan.frontend_url, EVAL_REACH_SECONDS):
        sup.log.warning(
            "post_eval skipped: %s did not accept a connection within %g s (the benchmark "
            "result stands)",
            sup.plan.frontend_url,
            EVAL_REACH_SECONDS,
        )
        return
    sink.emit("post_eval", "running")
    try:
        code = _run_to_completion(sup, specs)
    except StageError as exc:
        sup.log.warning("post_eval failed (the benchmark result stands): %s", exc)
        return
    if code != 0:
        sup.log.warning(
            "post_eval exited with code %d (the benchmark result stands); see %s",
            code,
            resolve_log_path(sup.log_dir, specs[-1].log_file),
        )


def wait_terminal(sup: Supervisor, sink: StatusSink) -> int | None:
    """Terminal services: wait until every one exited; the worst exit code (None: none)."""
    terminal = [p for p in sup.procs if p.spec.terminal]
    if not terminal:
        return None
    sink.emit("serving", "running", "waiting for terminal services")
    sup.wait_for(lambda: all(p.done.is_set() for p in terminal), None)
    codes = [p.exit_code if p.exit_code is not None else 1 for p in terminal]
    return max(codes, key=abs)


def run_serving(sup: Supervisor, sink: StatusSink) -> None:
    """A serving plan (``benchmark.type: manual``, ``--serve-only``): say where and how to stop,
    then supervise every process until the job is stopped (``srtctl cancel``, SIGTERM, the time
    limit) or a critical process fails; either ends the wait with AbortError, so this never
    returns normally."""
    plan = sup.plan
    stop = f"srtctl cancel {plan.job_id}"
    sink.emit("serving", "running", f"serving {plan.frontend_url} until cancelled ({stop})")
    sup.log.info(
        "Serving %s at %s until the job is cancelled or its time limit; stop it with: %s",
        plan.served_model_name,
        plan.frontend_url,
        stop,
    )
    sup.wait_for(lambda: False, None)
