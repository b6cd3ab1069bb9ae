"""Resuming a sweep (``srtctl apply --resume``): which points to run again, and why (pure).

**Point identity** (docs/recipes.md#resuming-a-sweep). A point is the SHA-256 of its
``config.yaml`` as ``srtctl apply`` writes it *before source pinning* (the resolved recipe of the
point: sweep parameters substituted, variant merged, ``--set``/``--unset`` and cluster defaults
applied, secrets redacted); in stand-in mode (``--stand-in-engines``) a marker line is appended
before hashing, so results of stand-in engines are never reused for a real run nor the reverse.
It is not the point's position: reordering the sweep's values, adding values or another sweep in
the same output folder changes nothing for the others; changing anything a point runs (a value,
``--set``, the cluster's defaults) makes it a new point. ``srtctl apply`` records it in the job
record, ``<job_id>.json`` ``sweep_point.id``; a job folder without it (written before this
existed) is identified by the SHA-256 of its ``config.yaml``, which is the same when no source
was pinned.

**Reuse decision** (:func:`decide_point`), over every earlier job of the point: a job is reused
when its final status is ``completed`` and its ``benchmark-rollup.json`` is valid: no
``validity.verdict: invalid`` on the rollup or on any run, and, for a rollup without
``validity`` (before the verdicts existed), a run with output tokens. The newest such job wins.
Else a job that still runs (its supervisor here, or Slurm's queue) is waited for, not resubmitted.
Else the point runs again and the table names why its newest job does not count.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from srt_cli.tables import render_table

__all__ = [
    "STAND_IN_MARKER",
    "Decision",
    "JobFacts",
    "Point",
    "RollupVerdict",
    "build_point_id",
    "build_rollup_verdict",
    "count_actions",
    "decide_point",
    "render_params",
    "render_resume_table",
]

#: Appended to ``config.yaml`` before hashing the point of a stand-in run.
STAND_IN_MARKER = "\n# srtctl: --stand-in-engines\n"

Action = Literal["reuse", "run", "wait"]


def build_point_id(config_yaml: str, *, stand_in: bool) -> str:
    """The identity of a point: SHA-256 (hex) of its ``config.yaml`` text (module docstring)."""
    text = config_yaml + STAND_IN_MARKER if stand_in else config_yaml
    return hashlib.sha256(text.encode()).hexdigest()


def render_params(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items()) or "-"


@dataclass(frozen=True)
class Point:
    """One job the source yields now (a sweep point, or a plain recipe or variant)."""

    point_id: str
    job_name: str
    params: Mapping[str, Any]


@dataclass(frozen=True)
class RollupVerdict:
    """What a job's ``benchmark-rollup.json`` says about its results."""

    valid: bool
    #: Why not (reason codes, or a sentence when the file says nothing usable); () when valid.
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class JobFacts:
    """What one earlier job folder of a point says (read by srt_cli.resume_io)."""

    job_id: str
    #: The folder, as shown in the table.
    folder: str
    #: ``generated_at`` of the job record (sorts jobs by age; job id breaks ties).
    generated_at: str
    #: ``status.json``: status and exit code and message; None when the runtime wrote none yet.
    status: str | None
    exit_code: int | None
    message: str
    #: The runtime's final event was written (cleanup, not running).
    final: bool
    #: Not final and still running: its supervisor runs here, or Slurm still has the job.
    alive: bool
    #: The stage of the last status event (for a job that ended without a final status).
    stage: str | None
    #: None: no ``benchmark-rollup.json``.
    rollup: RollupVerdict | None


class _Reason(msgspec.Struct, frozen=True):
    code: str


class _Validity(msgspec.Struct, frozen=True):
    verdict: str
    reasons: tuple[_Reason, ...] = ()


class _Run(msgspec.Struct, frozen=True):
    total_output_tokens: float | None = None
    validity: _Validity | None = None


class _RollupView(msgspec.Struct, frozen=True):
    """The part of ``benchmark-rollup.json`` the decision reads (srt_schema.rollup; ``validity``
    as the verdict step writes it). Unknown fields are ignored."""

    runs: tuple[_Run, ...] = ()
    data: dict[str, Any] | None = None
    validity: _Validity | None = None


def _codes(validity: _Validity) -> list[str]:
    return [r.code for r in validity.reasons] or ["no reason given"]


def build_rollup_verdict(data: bytes) -> RollupVerdict:
    """The verdict of a rollup file's bytes (module docstring: the reuse rule)."""
    try:
        rollup = msgspec.json.decode(data, type=_RollupView)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        return RollupVerdict(valid=False, reasons=(f"unreadable rollup ({exc})",))
    codes: list[str] = []
    if rollup.validity is not None and rollup.validity.verdict != "valid":
        codes.extend(_codes(rollup.validity))
    for run in rollup.runs:
        if run.validity is not None and run.validity.verdict != "valid":
            codes.extend(_codes(run.validity))
    if codes:
        return RollupVerdict(valid=False, reasons=tuple(dict.fromkeys(codes)))
    if rollup.validity is not None or any(r.validity is not None for r in rollup.runs):
        return RollupVerdict(valid=True)
    if rollup.data:
        return RollupVerdict(valid=True)  # an embedded aiperf export: no runs to check
    if not any((r.total_output_tokens or 0) > 0 for r in rollup.runs):
        return RollupVerdict(valid=False, reasons=("no run with output tokens",))
    return RollupVerdict(valid=True)


@dataclass(frozen=True)
class Decision:
    point: Point
    action: Action
    reason: str
    #: The job the reason is about (reused, waited for, or the newest that does not count).
    job: JobFacts | None


def _why_not(job: JobFacts) -> str:
    """Why ``job`` does not count (it is not reusable and does not run any more)."""
    if job.final and job.status != "completed":
        detail = f" ({job.message})" if job.message else ""
        return f"{job.status}: exit {job.exit_code}{detail}"
    if not job.final:
        if job.status is None:
            return "no rollup: no status.json (the job did not run)"
        return f"no rollup: the job ended without a final status (stage {job.stage})"
    if job.rollup is None:
        return "no rollup"
    return "invalid: " + ", ".join(job.rollup.reasons)


def _usable(job: JobFacts) -> bool:
    return job.final and job.status == "completed" and job.rollup is not None and job.rollup.valid


def decide_point(point: Point, jobs: Sequence[JobFacts]) -> Decision:
    """Reuse, wait for, or run ``point`` again, given every earlier job of it (any order)."""
    newest = sorted(jobs, key=lambda j: (j.generated_at, j.job_id), reverse=True)
    for job in newest:
        if _usable(job):
            return Decision(point=point, action="reuse", reason="valid, reused", job=job)
    for job in newest:
        if job.alive:
            reason = f"running: job {job.job_id} has not ended (not submitted again)"
            return Decision(point=point, action="wait", reason=reason, job=job)
    if not newest:
        return Decision(point=point, action="run", reason="no rollup: never started", job=None)
    return Decision(point=point, action="run", reason=_why_not(newest[0]), job=newest[0])


def count_actions(decisions: Sequence[Decision]) -> dict[Action, int]:
    counts: dict[Action, int] = {"reuse": 0, "run": 0, "wait": 0}
    for d in decisions:
        counts[d.action] += 1
    return counts


def render_resume_table(decisions: Sequence[Decision], *, source: str) -> str:
    """The table ``srtctl apply --resume`` prints before it starts anything, and its summary."""
    rows = [
        [
            d.point.job_name,
            render_params(d.point.params),
            d.job.folder if d.job is not None else "-",
            d.action,
            d.reason,
        ]
        for d in decisions
    ]
    table = render_table(["point", "parameters", "job folder", "action", "reason"], rows)
    counts = count_actions(decisions)
    summary = (
        f"resume {source}: {len(decisions)} points: {counts['reuse']} reused, "
        f"{counts['run']} to run, {counts['wait']} still running"
    )
    return f"{summary}\n{table}"
