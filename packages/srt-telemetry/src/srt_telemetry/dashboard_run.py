"""Which job the dashboard shows and how it ended: the page title, the recipe line under it and,
for a run that did not succeed, its diagnosis at the very top.

Inputs, in the log folder (RUN_DIR) or the job folder above it, all optional:
- `plan.json` (srt-planner's `JobPlan`): `job_name`, `job_id`, `launcher`, `nodes`, `summary`
  (model, precision, GPUs per node, workers per role, engine, frontend, benchmark) and
  `stand_in`. Decoded with `JobView`, a tolerant subset (unknown fields ignored);
  tests/test_contract_dashboard.py decodes every golden plan with it.
- `diagnosis.json` (srt-runtime's `DiagnosisRecord`, written before post-processing when the run
  failed): what failed, where, why, its log and the decisive lines of the log.
- `status.json` (srt-runtime's `StatusEvent`): the final status when the dashboard is rebuilt
  after the job ended (while the runtime builds it, the file still says `running`).

A file that does not decode is named in the page's notes and left out; it never stops the page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import TypeVar

import msgspec

__all__ = [
    "DiagnosisView",
    "JobSummaryView",
    "JobView",
    "RunInfo",
    "StatusView",
    "failure_html",
    "read_run_info",
    "recipe_line",
    "run_title",
]

PLAN_FILE = "plan.json"
DIAGNOSIS_FILE = "diagnosis.json"
STATUS_FILE = "status.json"

T = TypeVar("T")


class JobSummaryView(msgspec.Struct, frozen=True, kw_only=True):
    model_path: str = ""
    precision: str = ""
    gpu_type: str | None = None
    gpus_per_node: int | None = None
    workers: dict[str, int] = {}
    benchmark_type: str = ""
    backend_type: str = ""
    frontend_type: str = ""


class StandInView(msgspec.Struct, frozen=True, kw_only=True):
    model: str = ""


class JobView(msgspec.Struct, frozen=True, kw_only=True):
    """The fields of `plan.json` the dashboard shows."""

    job_id: str = ""
    job_name: str = ""
    launcher: str = ""
    nodes: tuple[str, ...] = ()
    served_model_name: str = ""
    summary: JobSummaryView | None = None
    stand_in: StandInView | None = None


class DiagnosisView(msgspec.Struct, frozen=True, kw_only=True):
    """`diagnosis.json`: the runtime's diagnosis of a failed run, as data."""

    what: str = ""
    reason: str = ""
    node: str | None = None
    exit_code: int | None = None
    log_line: str | None = None
    log_path: str | None = None
    log_file: str | None = None
    log_excerpt: tuple[str, ...] = ()
    #: The failure catalog's cause id ("unknown cause" when none matched), title, fix, evidence.
    cause: str | None = None
    cause_title: str | None = None
    fix: str | None = None
    evidence: str | None = None


class StatusView(msgspec.Struct, frozen=True, kw_only=True):
    job_id: str = ""
    status: str = ""
    stage: str = ""
    message: str = ""
    exit_code: int | None = None
    at: str = ""


@dataclass(frozen=True)
class RunInfo:
    job: JobView | None = None
    diagnosis: DiagnosisView | None = None
    status: StatusView | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def failed(self) -> bool:
        final = self.status is not None and self.status.status in ("failed", "cancelled", "timeout")
        return self.diagnosis is not None or final


def _first(run_dir: Path, name: str) -> Path | None:
    for folder in (run_dir, run_dir.parent):
        if (folder / name).is_file():
            return folder / name
    return None


def _decode(path: Path | None, kind: type[T], notes: list[str]) -> T | None:
    if path is None:
        return None
    try:
        return msgspec.json.decode(path.read_bytes(), type=kind)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        notes.append(f"{path}: not shown ({exc})")
        return None


def read_run_info(run_dir: Path) -> RunInfo:
    notes: list[str] = []
    return RunInfo(
        job=_decode(_first(run_dir, PLAN_FILE), JobView, notes),
        diagnosis=_decode(_first(run_dir, DIAGNOSIS_FILE), DiagnosisView, notes),
        status=_decode(_first(run_dir, STATUS_FILE), StatusView, notes),
        notes=tuple(notes),
    )


def run_title(info: RunInfo, fallback: str) -> str:
    """`<job name> (job <id>)`, or `fallback` without a plan."""
    job = info.job
    if job is None or not job.job_name:
        return fallback
    return f"{job.job_name} (job {job.job_id})" if job.job_id else job.job_name


def recipe_line(info: RunInfo, *, isl: int | None = None, osl: int | None = None) -> str:
    """The recipe in one line: engine and workers, frontend, model, GPUs, benchmark, launcher."""
    job = info.job
    if job is None or job.summary is None:
        return ""
    s = job.summary
    parts = []
    workers = ", ".join(
        f"{role.removesuffix('_workers')} × {n}" for role, n in sorted(s.workers.items()) if n
    )
    parts.append(f"{s.backend_type} engine" + (f" ({workers} workers)" if workers else ""))
    if s.frontend_type:
        parts.append(f"{s.frontend_type} frontend")
    model = job.served_model_name or Path(s.model_path).name
    parts.append(f"model {model}" + (f" ({s.precision})" if s.precision else ""))
    gpus = f"{len(job.nodes)} node(s)" if job.nodes else ""
    if s.gpus_per_node:
        gpus += f" × {s.gpus_per_node} GPUs" + (f" {s.gpu_type}" if s.gpu_type else "")
    if gpus:
        parts.append(gpus.strip())
    bench = s.benchmark_type
    if isl is not None and osl is not None:
        bench += f" ISL {isl} / OSL {osl}"
    parts.append(bench)
    if job.launcher:
        parts.append(f"{job.launcher} launcher")
    if job.stand_in is not None:
        parts.append("stand-in engines")
    return " · ".join(p for p in parts if p)


def failure_html(info: RunInfo) -> str:
    """The diagnosis of a run that did not succeed (empty for a run that did)."""
    if not info.failed:
        return ""
    final = info.status.status if info.status is not None else None
    head = {
        "cancelled": "This run was CANCELLED",
        "timeout": "This run reached its TIME LIMIT",
    }.get(final or "", "This run FAILED")
    d = info.diagnosis
    if d is None:  # only the final status is known
        assert info.status is not None
        st = info.status
        code = "" if st.exit_code is None else f" (exit code {st.exit_code})"
        return (
            f'<div class="failed" id="diagnosis"><h2>{head}{escape(code)}</h2>'
            f"<p>{escape(st.message or 'no message')}; stage {escape(st.stage)}</p></div>"
        )
    rows = [("what", d.what), ("node", d.node), ("exit code", d.exit_code)]
    rows += [("fatal line", d.log_line)]
    if d.cause is not None:
        title = f": {d.cause_title}" if d.cause_title else ""
        rows += [("cause", f"{d.cause}{title}"), ("fix", d.fix), ("evidence", d.evidence)]
    cells = "".join(
        f'<tr><th scope="row">{k}</th><td>{escape(str(v))}</td></tr>'
        for k, v in rows
        if v is not None
    )
    if d.log_file:
        cells += (
            f'<tr><th scope="row">log</th><td><a href="{escape(d.log_file)}">'
            f"{escape(d.log_file)}</a></td></tr>"
        )
    elif d.log_path:
        cells += f'<tr><th scope="row">log</th><td>{escape(d.log_path)}</td></tr>'
    excerpt = "\n".join(d.log_excerpt)
    return (
        f'<div class="failed" id="diagnosis"><h2>{head}</h2>'
        f'<p class="reason">{escape(d.reason)}</p><table class="kv">{cells}</table>'
        + (f"<pre>{escape(excerpt)}</pre>" if excerpt else "")
        + "</div>"
    )
