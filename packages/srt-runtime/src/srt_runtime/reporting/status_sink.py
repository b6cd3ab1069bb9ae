"""The supervisor's lifecycle events as status-API updates (docs/telemetry-and-bench.md#status-api).

:class:`RemoteStatusSink` is a ``StatusSink``: it hands every event to the local sink first (so
``status.json`` / ``status_events.jsonl`` always have it), then queues the matching
:class:`JobUpdate` on a :class:`StatusReporter`. Both steps are cheap and never raise because of
the network. :func:`build_job_update` is the pure mapping, table-tested.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from srt_planner.plan import JobPlan
from srt_runtime.reporting.job_report import JobReport
from srt_runtime.reporting.status import JobStage, JobStatus, JobUpdate, StatusReporter
from srt_runtime.status import Stage, StatusSink, StatusValue
from srt_schema.timestamps import iso_seconds_z

__all__ = ["STAGE_MAP", "RemoteStatusSink", "build_job_update", "build_started_metadata"]

#: Supervisor stage -> (API status while running, API stage, default message). "Status" is the
#: stage currently executing, reported on entering it.
STAGE_MAP: Mapping[Stage, tuple[JobStatus, JobStage, str]] = {
    "starting": ("starting", "starting", "Job started"),
    "host_setup": ("starting", "preflight", "Running host setup"),
    "head_infrastructure": ("starting", "head_infrastructure", "Starting head infrastructure"),
    "before_workers": ("starting", "head_infrastructure", "Starting services"),
    "workers": ("workers", "workers", "Starting workers"),
    "frontend": ("frontend", "frontend", "Starting frontend"),
    "health": ("frontend", "frontend", "Waiting for workers to pass the health check"),
    "after_frontend": ("frontend", "frontend", "Starting after_frontend services"),
    "telemetry": ("benchmark", "benchmark", "Starting telemetry"),
    "benchmark": ("benchmark", "benchmark", "Running benchmark"),
    "post_eval": ("benchmark", "benchmark", "Running post-benchmark evaluation"),
    "serving": ("frontend", "frontend", "Inference endpoint ready"),
    "cleanup": ("benchmark", "cleanup", "Cleaning up"),
}


def build_started_metadata(
    plan: JobPlan,
    *,
    log_dir: str,
    affinity_cpus: int | None = None,
    cpu_warning: str | None = None,
) -> dict[str, Any]:
    """The ``metadata`` of the first (``starting``) update, docs/telemetry-and-bench.md#status-api
    (pure; nulls left out). Everything comes from the plan (its ``summary`` and ``cluster``)."""
    summary = plan.summary
    resources: dict[str, Any] = {
        "gpu_type": summary.gpu_type if summary is not None else None,
        "gpus_per_node": summary.gpus_per_node if summary is not None else None,
        **(summary.workers if summary is not None else {}),
        "cpu_allocation": affinity_cpus,
        "cpu_check": None if affinity_cpus is None else ("warning" if cpu_warning else "ok"),
    }
    doc: dict[str, Any] = {
        "head_node": plan.node_roles.head,
        "log_dir": log_dir,
        "job_name": plan.job_name,
        "cluster": plan.cluster,
    }
    if summary is not None:
        doc = {
            "model": {"path": summary.model_path, "precision": summary.precision},
            "resources": {},
            "benchmark": {"type": summary.benchmark_type},
            "backend_type": summary.backend_type,
            "frontend_type": summary.frontend_type,
            **doc,
        }
    doc["resources"] = {k: v for k, v in resources.items() if v is not None}
    return {k: v for k, v in doc.items() if v is not None}


def build_job_update(
    stage: Stage,
    status: StatusValue,
    message: str,
    exit_code: int | None,
    *,
    now: float,
    logs_url: str | None = None,
    started_metadata: Mapping[str, Any] | None = None,
    current: JobStatus | None = None,
    report: JobReport | None = None,
) -> JobUpdate:
    """The API update for one supervisor event (pure).

    The final event (``cleanup`` with ``completed``/``failed``) carries ``completed_at``,
    ``exit_code``, the job's ``report`` (when post-processing built one) and, when the upload
    succeeded, ``logs_url``; the first carries ``started_at``
    and the run metadata. Entering ``cleanup`` keeps the ``current`` API status (a failed run
    stays ``failed`` while it cleans up).
    """
    api_status, api_stage, default = STAGE_MAP[stage]
    stamp = iso_seconds_z(now)
    if stage == "cleanup" and status != "running":
        code = exit_code if exit_code is not None else (0 if status == "completed" else 1)
        final: JobStatus = "completed" if code == 0 else "failed"
        text = (
            "Benchmark completed successfully" if code == 0 else f"Job failed with exit code {code}"
        )
        if status == "timeout":  # a local run stopped at its time limit, as Slurm would
            final, text = "timeout", f"Job reached its time limit (exit code {code})"
        return JobUpdate(
            status=final,
            stage="cleanup",
            message=f"{text}: {message}" if message and code != 0 else text,
            updated_at=stamp,
            completed_at=stamp,
            exit_code=code,
            logs_url=logs_url,
            report=report,
        )
    if status == "failed":
        api_status = "failed"
    elif stage == "cleanup" and current is not None:
        api_status = current
    if stage == "starting" and status == "running":
        return JobUpdate(
            status=api_status,
            stage=api_stage,
            message=message or default,
            updated_at=stamp,
            started_at=stamp,
            metadata=dict(started_metadata) if started_metadata else None,
        )
    return JobUpdate(
        status=api_status,
        stage=api_stage,
        message=message or default,
        updated_at=stamp,
        exit_code=exit_code,
    )


class RemoteStatusSink:
    """A ``StatusSink`` that records locally through ``local`` and also reports remotely."""

    def __init__(
        self,
        local: StatusSink,
        reporter: StatusReporter,
        *,
        wall: Callable[[], float],
        started_metadata: Mapping[str, Any] | None = None,
    ) -> None:
        self._local = local
        self._reporter = reporter
        self._wall = wall
        self._started_metadata = dict(started_metadata or {})
        self.logs_url: str | None = None
        #: Sent with the final event (``ReportingSession.finish`` sets it).
        self.report: JobReport | None = None
        self._current: JobStatus | None = None

    def emit(
        self, stage: Stage, status: StatusValue, message: str = "", exit_code: int | None = None
    ) -> None:
        self._local.emit(stage, status, message, exit_code)
        update = build_job_update(
            stage,
            status,
            message,
            exit_code,
            now=self._wall(),
            logs_url=self.logs_url,
            started_metadata=self._started_metadata,
            current=self._current,
            report=self.report,
        )
        self._current = update.status
        self._reporter.send(update)

    def report_artifacts(self, logs_url: str) -> None:
        """After a successful upload: remember the URL for the final event and announce it."""
        self.logs_url = logs_url
        self._reporter.send(
            JobUpdate(
                status=self._current or "benchmark",
                stage="cleanup",
                message="Artifacts uploaded",
                updated_at=iso_seconds_z(self._wall()),
                logs_url=logs_url,
            )
        )
