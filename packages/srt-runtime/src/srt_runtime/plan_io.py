"""Reading and writing ``plan.json`` (the JobPlan the run executes)."""

from __future__ import annotations

from pathlib import Path

import msgspec

from srt_planner.plan import JobPlan
from srt_runtime.errors import PlanLoadError, PlannerUnavailableError
from srt_runtime.files import write_atomic

__all__ = ["plan_from_job_dir", "read_plan", "write_plan"]


def read_plan(path: Path) -> JobPlan:
    """Decode ``path`` as a JobPlan; the error names the file and the JSON path."""
    try:
        return msgspec.json.decode(path.read_bytes(), type=JobPlan)
    except FileNotFoundError as exc:
        raise PlanLoadError(f"{path}: no such plan file; pass --plan <plan.json>") from exc
    except msgspec.ValidationError as exc:
        raise PlanLoadError(f"{path}: not a valid JobPlan: {exc}") from exc
    except msgspec.DecodeError as exc:
        raise PlanLoadError(f"{path}: not JSON: {exc}") from exc


def write_plan(plan: JobPlan, path: Path) -> None:
    write_atomic(path, msgspec.json.format(msgspec.json.encode(plan)) + b"\n")


def plan_from_job_dir(job_dir: Path) -> JobPlan:
    """Plan the job from its directory: ``read_facts(environ)`` once, then ``plan_job``.

    SEAM (issue 6): ``srt_planner.plan_job`` is being written; until it exists this fails with
    a clear message and ``run --plan plan.json`` is the way to run an already-planned job.
    """
    try:
        from srt_planner import plan_job  # type: ignore[attr-defined,unused-ignore]
    except ImportError as exc:
        raise PlannerUnavailableError(
            f"cannot plan the job in {job_dir}: srt_planner.plan_job does not exist yet in this "
            "build; run an already-planned job with --plan <plan.json>"
        ) from exc
    raise PlannerUnavailableError(  # pragma: no cover - wired when plan_job lands
        f"srt_planner.plan_job ({plan_job!r}) exists but run_job is not wired to it yet; "
        "pass --plan <plan.json>"
    )
