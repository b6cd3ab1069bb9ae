"""``srtctl wait``: block until jobs end and say how each ended (docs: packages/srt-cli/README.md).

An outcome is decided from the job folder first (the runtime's final ``status.json`` and the
rollup's verdicts), then from Slurm (a job Slurm no longer runs whose folder has no final status)
or this machine (a local run whose supervisor is gone). An empty queue never counts as success:
``completed`` needs the runtime's own final status and, when the plan has a benchmark, a valid
``benchmark-rollup.json``. ``classify`` is pure; ``observe`` reads; ``wait_for_jobs`` loops with
an injected clock and sleep, so tests never wait in real time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

__all__ = [
    "EXIT_CODES",
    "Observation",
    "Outcome",
    "classify",
    "exit_code_for",
    "observe",
    "wait_for_jobs",
]

Kind = Literal["completed", "invalid", "cancelled", "failed", "timed_out", "unknown"]

#: Exit code of ``srtctl wait`` per outcome; with several jobs, the largest one wins.
EXIT_CODES: Mapping[Kind, int] = {
    "completed": 0,
    "invalid": 10,
    "cancelled": 11,
    "failed": 12,
    "timed_out": 13,
    "unknown": 14,
}

#: Slurm states of a job that has left the queue (sacct), by what they mean for wait.
_SLURM_CANCELLED = ("CANCELLED",)
_SLURM_RUNNING = ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED")
#: A local folder with no status and no supervisor is given this long (on the wait's clock) to
#: start before it counts as failed (apply writes the folder before it starts the runtime).
START_GRACE_SECONDS = 30.0


@dataclass(frozen=True)
class Observation:
    """What one look at a job found (all I/O already done)."""

    job_id: str
    exists: bool
    #: status.json: status and whether it is the runtime's final event.
    status: str | None = None
    final: bool = False
    exit_code: int | None = None
    message: str = ""
    #: The plan has a benchmark process (its result must then be valid).
    has_benchmark: bool = True
    #: None: no rollup file; else (valid, reasons).
    rollup: tuple[bool, tuple[str, ...]] | None = None
    #: Local: a supervisor of the job runs here (None: not looked / a Slurm job).
    supervisor_alive: bool | None = None
    #: Slurm's state (squeue / sacct), None when Slurm knows nothing of the job.
    slurm_state: str | None = None
    job_dir: str = ""


@dataclass(frozen=True)
class Outcome:
    job_id: str
    kind: Kind
    detail: str
    exit_code: int | None = None
    job_dir: str = ""
    extra: dict[str, object] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {
            "job_id": self.job_id,
            "outcome": self.kind,
            "exit": EXIT_CODES[self.kind],
            "job_exit_code": self.exit_code,
            "detail": self.detail,
            "job_dir": self.job_dir,
            **self.extra,
        }

    def line(self) -> str:
        return f"{self.job_id}: {self.kind} ({self.detail})"


def _final(obs: Observation) -> Outcome:
    code, where = obs.exit_code, obs.job_dir
    said = f": {obs.message}" if obs.message else ""
    if obs.status == "completed":
        if obs.rollup is not None and not obs.rollup[0]:
            reasons = ", ".join(obs.rollup[1]) or "no reason given"
            return Outcome(obs.job_id, "invalid", f"result invalid: {reasons}", code, where)
        if obs.rollup is None and obs.has_benchmark:
            return Outcome(obs.job_id, "invalid", "completed without a benchmark-rollup.json",
                           code, where)  # fmt: skip
        detail = "valid result" if obs.rollup is not None else "completed (no benchmark planned)"
        return Outcome(obs.job_id, "completed", detail, code, where)
    if obs.status == "cancelled":
        return Outcome(obs.job_id, "cancelled", f"exit {code}{said}", code, where)
    kind_word = "time limit reached" if obs.status == "timeout" else f"exit {code}"
    return Outcome(obs.job_id, "failed", f"{kind_word}{said}", code, where)


def classify(obs: Observation, *, waited: float) -> Outcome | None:
    """The outcome of a job, or None while it has not ended (pure). ``waited``: seconds since
    the wait began (for the start grace of a local folder)."""
    if obs.final:
        return _final(obs)
    if obs.slurm_state is not None:
        state = obs.slurm_state.split()[0].rstrip("+")
        if state in _SLURM_RUNNING:
            return None
        if state in _SLURM_CANCELLED:
            detail = "Slurm says CANCELLED and the job wrote no final status"
            return Outcome(obs.job_id, "cancelled", detail, None, obs.job_dir)
        detail = f"Slurm says {state} and the job wrote no final status"
        return Outcome(obs.job_id, "failed", detail, None, obs.job_dir)
    if not obs.exists:
        detail = "no job folder, and Slurm does not know the job"
        if obs.supervisor_alive is not None:
            detail = "no job folder (pass -o <output base> if the job was written elsewhere)"
        return Outcome(obs.job_id, "unknown", detail, None, obs.job_dir)
    if obs.supervisor_alive is False:
        if obs.status is None:
            if waited < START_GRACE_SECONDS:
                return None
            return Outcome(obs.job_id, "failed", "the job never started (no status.json, no "
                           "supervisor)", None, obs.job_dir)  # fmt: skip
        detail = "its supervisor is gone without a final status (killed)"
        return Outcome(obs.job_id, "failed", detail, None, obs.job_dir)
    if obs.supervisor_alive is None and obs.slurm_state is None:
        # A Slurm job whose folder is there but Slurm knows nothing (no squeue here, or purged).
        return Outcome(obs.job_id, "failed", "Slurm does not know the job and it wrote no "
                       "final status", None, obs.job_dir)  # fmt: skip
    return None


def exit_code_for(outcomes: Sequence[Outcome]) -> int:
    return max((EXIT_CODES[o.kind] for o in outcomes), default=0)


def observe(job_id: str, base: Path, environ: Mapping[str, str]) -> Observation:
    """Read one job's folder (and ask Slurm, or this machine's /proc) once."""
    from srt_cli.jobs import (
        find_supervisors,
        is_final,
        parse_job_id,
        query_job,
        read_plan,
        read_status,
    )
    from srt_cli.resume import build_rollup_verdict
    from srt_schema.rollup import ROLLUP_FILE

    ref = parse_job_id(job_id)
    job_dir = base / ref.job_id
    exists = job_dir.is_dir()
    status = read_status(job_dir) if exists else None
    final = is_final(status)
    rollup = None
    has_benchmark = True
    if final:
        plan = read_plan(job_dir)
        if plan is not None:
            has_benchmark = any(p.phase == "benchmark" for p in plan.processes)
            has_benchmark = has_benchmark and not plan.serve_only
        for path in (job_dir / "logs" / ROLLUP_FILE, job_dir / ROLLUP_FILE):
            if path.is_file():
                verdict = build_rollup_verdict(path.read_bytes())
                rollup = (verdict.valid, verdict.reasons)
                break
    alive: bool | None = None
    slurm_state = None
    if not final:
        if ref.kind == "local":
            alive = bool(find_supervisors(job_dir)) if exists else False
        else:
            found = query_job(environ, ref.job_id)
            slurm_state = found.rows[0].state if found.rows else None
    return Observation(
        job_id=ref.job_id,
        exists=exists,
        status=status.status if status is not None else None,
        final=final,
        exit_code=status.exit_code if status is not None else None,
        message=status.message if status is not None else "",
        has_benchmark=has_benchmark,
        rollup=rollup,
        supervisor_alive=alive,
        slurm_state=slurm_state,
        job_dir=str(job_dir),
    )


def wait_for_jobs(
    job_ids: Sequence[str],
    look: Callable[[str], Observation],
    *,
    timeout: float | None,
    interval: float = 2.0,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    report: Callable[[Outcome], None] = lambda _o: None,
) -> list[Outcome]:
    """Look at every job until each has an outcome or ``timeout`` seconds passed (then the
    jobs still running are ``timed_out``). ``report`` is called once per job as it ends, in the
    order they end; the result is in the order of ``job_ids``."""
    start = clock()
    done: dict[str, Outcome] = {}
    while True:
        waited = clock() - start
        for job_id in job_ids:
            if job_id in done:
                continue
            outcome = classify(look(job_id), waited=waited)
            if outcome is not None:
                done[job_id] = outcome
                report(outcome)
        if len(done) == len(set(job_ids)):
            break
        if timeout is not None and clock() - start >= timeout:
            for job_id in job_ids:
                if job_id not in done:
                    obs = look(job_id)
                    detail = f"still running after {timeout:g} s (status {obs.status or '-'})"
                    done[job_id] = Outcome(job_id, "timed_out", detail, None, obs.job_dir)
                    report(done[job_id])
            break
        sleep(interval if timeout is None else max(0.0, min(interval, timeout - waited)))
    return [done[j] for j in job_ids]
