"""What a finished job tells its status collectors: results, verdicts, diagnosis, uploaded files
(docs/telemetry-and-bench.md#status-api, "The job report").

:class:`JobReport` is the ``report`` of the final status event (``completed`` / ``failed``,
``srt_runtime.reporting.status.JobUpdate``): the status collector (``srtctl status-server``)
decodes it with these same structs, stores it and shows it. It is built once, after the S3
upload and before the final event, from files the job already wrote:

- ``results``: the rollup table (``benchmark-rollup.json``) per concurrency: output tok/s, output
  tok/s per GPU (divided by the GPUs of the plan's worker processes), TTFT and ITL p50/p99, the
  completed requests, J per output token when the rollup's power verdict is publishable, and each
  run's ``validity`` verdict when the rollup has one (and the whole run's), the rollup's own
  ``srt_schema.rollup.Validity``;
- ``diagnosis``: ``logs/diagnosis.json`` of a failed run (srt_runtime.diagnosis.DiagnosisRecord);
- ``uploads``: where ``reporting.s3`` put the log folder, the files there (text files first, at
  most :data:`MAX_LINKED` named) and the dashboard when it was uploaded;
- ``analysis``: the AI analysis of a failed run (``reporting.ai_analysis``), which runs before the
  upload: its text (at most :data:`MAX_ANALYSIS_CHARS`), or why there is none.

The structs only (the collector imports them; no boto3, no planner): the builders are
:mod:`srt_runtime.reporting.job_report_read`.
"""

from __future__ import annotations

from typing import Final

import msgspec

from srt_runtime.diagnosis import DiagnosisRecord
from srt_schema.rollup import Validity

__all__ = [
    "MAX_ANALYSIS_CHARS",
    "MAX_LINKED",
    "AnalysisSummary",
    "JobReport",
    "JobResults",
    "ResultRow",
    "UploadedFiles",
]

#: At most this many uploaded files are named in the report (``files_total`` counts them all).
MAX_LINKED: Final = 200
#: The analysis text sent to the collectors is cut here (the whole file is in the log folder).
MAX_ANALYSIS_CHARS: Final = 20_000


class AnalysisSummary(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The AI analysis of a failed run: its text when it was written, else why not."""

    ok: bool
    #: "written", or why there is no analysis (no API key, a timeout, an HTTP error, ...).
    reason: str
    #: ``ai_analysis.md``, relative to the log folder, when it was written.
    file: str | None = None
    text: str | None = None
    #: The text was cut at MAX_ANALYSIS_CHARS.
    truncated: bool = False


class ResultRow(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One concurrency of the rollup; a number the client did not report is null."""

    concurrency: int | None
    #: Output tokens per second (the rollup's ``throughput_toks``).
    output_tok_s: float | None
    #: ``output_tok_s`` / :attr:`JobResults.gpus`.
    output_tok_s_per_gpu: float | None
    ttft_p50_ms: float | None
    ttft_p99_ms: float | None
    itl_p50_ms: float | None
    itl_p99_ms: float | None
    completed_requests: int | float | None
    #: GPU joules per output token; only when the rollup's power verdict is publishable.
    joules_per_output_token: float | None = None
    validity: Validity | None = None


class JobResults(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The rollup's table, per concurrency (ascending)."""

    benchmark_type: str
    #: GPUs of the plan's worker processes (None when the plan has none or is unreadable).
    gpus: int | None
    runs: tuple[ResultRow, ...] = ()
    #: The whole benchmark's verdict, when the rollup has one.
    validity: Validity | None = None
    #: Why the rollup's energy is not quoted (its power verdict is not publishable), else None.
    energy_note: str | None = None


class UploadedFiles(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """Where ``reporting.s3`` uploaded the log folder, and what is there."""

    #: ``s3://<bucket>/<prefix>/<date>/<job_id>/``.
    url: str
    #: The same folder over HTTP(S) (path style under ``endpoint_url``, else AWS's virtual-host
    #: address); a browser opens it when the bucket lets it read.
    http_url: str
    #: Files there, relative to ``url``: the dashboard, the rollup and the diagnosis first, then
    #: text files, then the rest, at most MAX_LINKED.
    files: tuple[str, ...] = ()
    files_total: int = 0
    #: The dashboard's name in ``files`` when it was uploaded.
    dashboard: str | None = None


class JobReport(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The ``report`` of the final status event; each part is left out when there is none."""

    results: JobResults | None = None
    diagnosis: DiagnosisRecord | None = None
    uploads: UploadedFiles | None = None
    analysis: AnalysisSummary | None = None
