"""Building the job report of the final status event from the files the job wrote
(docs/telemetry-and-bench.md#status-api, "The job report"; the structs: job_report.py).

:func:`build_results`, :func:`build_uploads` and :func:`build_job_report` are pure;
:func:`read_job_report` reads ``benchmark-rollup.json``, ``logs/diagnosis.json`` and ``plan.json``
(for the GPU count) and never raises for a missing or malformed one: that part is left out, with
one warning.
"""

from __future__ import annotations

import logging
from pathlib import Path, PurePosixPath
from typing import Final
from urllib.parse import quote

import msgspec

from srt_planner.plan import JobPlan
from srt_runtime.diagnosis import DIAGNOSIS_FILE, DiagnosisRecord
from srt_runtime.reporting._common import LogFn, null_log
from srt_runtime.reporting.ai_analysis import REPORT_FILE as ANALYSIS_FILE
from srt_runtime.reporting.ai_analysis import AnalysisResult
from srt_runtime.reporting.job_report import (
    MAX_ANALYSIS_CHARS,
    MAX_LINKED,
    AnalysisSummary,
    JobReport,
    JobResults,
    ResultRow,
    UploadedFiles,
)
from srt_runtime.reporting.s3 import UploadResult
from srt_schema.recipe import S3Config
from srt_schema.rollup import ROLLUP_FILE, Rollup, RollupRun, decode_rollup

__all__ = [
    "DASHBOARD_FILE",
    "build_job_report",
    "build_results",
    "build_uploads",
    "read_job_report",
    "s3_http_url",
]

#: The per-run dashboard srt-telemetry writes into the log folder.
DASHBOARD_FILE: Final = "perf_dashboard.html"
#: Suffixes of files a person opens from the collector's page, named before any other file.
_TEXT_SUFFIXES: Final = (".out", ".err", ".log", ".txt", ".json", ".csv", ".html", ".yaml", ".md")
#: Named first, in this order, when uploaded.
_FIRST: Final = (DASHBOARD_FILE, ROLLUP_FILE, "benchmark-rollup.csv", DIAGNOSIS_FILE)


def _per_gpu(value: float | None, gpus: int | None) -> float | None:
    return value / gpus if value is not None and gpus else None


def _row(run: RollupRun, gpus: int | None, *, energy: bool) -> ResultRow:
    joules = run.energy.joules_per_output_token if energy and run.energy is not None else None
    if run.energy is not None and not run.energy.power_coverage_valid:
        joules = None
    return ResultRow(
        concurrency=run.concurrency,
        output_tok_s=run.throughput_toks,
        output_tok_s_per_gpu=_per_gpu(run.throughput_toks, gpus),
        ttft_p50_ms=run.ttft_median_ms,
        ttft_p99_ms=run.ttft_p99_ms,
        itl_p50_ms=run.itl_median_ms,
        itl_p99_ms=run.itl_p99_ms,
        completed_requests=run.completed_requests,
        joules_per_output_token=joules,
        validity=run.validity,
    )


def build_results(rollup: Rollup, gpus: int | None) -> JobResults:
    """The table of ``benchmark-rollup.json`` (pure)."""
    power = rollup.power
    publishable = power is not None and power.publication_valid
    note = None
    if any(run.energy is not None for run in rollup.runs) and not publishable:
        reasons = ", ".join(power.reason_codes) if power is not None else ""
        note = "energy not quoted: the power verdict is not publishable" + (
            f" ({reasons})" if reasons else ""
        )
    return JobResults(
        benchmark_type=rollup.benchmark_type,
        gpus=gpus or None,
        runs=tuple(_row(run, gpus, energy=publishable) for run in rollup.sorted_runs()),
        validity=rollup.validity,
        energy_note=note,
    )


def s3_http_url(config: S3Config, s3_url: str) -> str:
    """``s3://<bucket>/<key prefix>`` as an HTTP(S) address (pure): path style under
    ``endpoint_url`` (what the upload used), else AWS's virtual-host form (path style for a
    bucket name with dots, which the virtual host's certificate does not cover)."""
    bucket = config.bucket
    key = s3_url.removeprefix(f"s3://{bucket}/")
    path = quote(key)
    if config.endpoint_url:
        return f"{config.endpoint_url.rstrip('/')}/{quote(bucket)}/{path}"
    region = config.region or "us-east-1"
    if "." in bucket:
        return f"https://s3.{region}.amazonaws.com/{quote(bucket)}/{path}"
    return f"https://{bucket}.s3.{region}.amazonaws.com/{path}"


def _rank(name: str) -> tuple[int, int, str]:
    if name in _FIRST:
        return (0, _FIRST.index(name), name)
    text = PurePosixPath(name).suffix in _TEXT_SUFFIXES
    return (1 if text else 2, name.count("/"), name)


def build_uploads(config: S3Config, upload: UploadResult) -> UploadedFiles:
    """The ``uploads`` part for a successful upload (pure)."""
    ordered = sorted(upload.files, key=_rank)
    return UploadedFiles(
        url=upload.url,
        http_url=s3_http_url(config, upload.url),
        files=tuple(ordered[:MAX_LINKED]),
        files_total=len(upload.files),
        dashboard=DASHBOARD_FILE if DASHBOARD_FILE in upload.files else None,
    )


def build_job_report(
    *,
    results: JobResults | None,
    diagnosis: DiagnosisRecord | None,
    uploads: UploadedFiles | None,
    analysis: AnalysisSummary | None = None,
) -> JobReport | None:
    """The report, or None when there is nothing to say (pure)."""
    if results is None and diagnosis is None and uploads is None and analysis is None:
        return None
    return JobReport(results=results, diagnosis=diagnosis, uploads=uploads, analysis=analysis)


def read_analysis(log_dir: Path, result: AnalysisResult | None) -> AnalysisSummary | None:
    """What the report says of the AI analysis (None when it was not needed)."""
    if result is None or not result.ran:
        return (
            None
            if result is None or result.reason == "not needed"
            else (AnalysisSummary(ok=False, reason=result.reason))
        )
    if not result.ok:
        return AnalysisSummary(ok=False, reason=result.reason)
    try:
        text = (log_dir / ANALYSIS_FILE).read_text(errors="replace")
    except OSError as exc:
        return AnalysisSummary(ok=False, reason=f"{ANALYSIS_FILE} cannot be read: {exc}")
    return AnalysisSummary(
        ok=True,
        reason=result.reason,
        file=ANALYSIS_FILE,
        text=text[:MAX_ANALYSIS_CHARS],
        truncated=len(text) > MAX_ANALYSIS_CHARS,
    )


def _worker_gpus(job_dir: Path) -> int | None:
    try:
        plan = msgspec.json.decode((job_dir / "plan.json").read_bytes(), type=JobPlan)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    return sum(len(p.gpus) for p in plan.processes if p.kind == "worker") or None


def _read_results(job_dir: Path, log_dir: Path, log: LogFn) -> JobResults | None:
    path = log_dir / ROLLUP_FILE
    try:
        rollup = decode_rollup(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        log(logging.WARNING, f"status report without results: {path}: {exc}")
        return None
    return build_results(rollup, _worker_gpus(job_dir))


def _read_diagnosis(log_dir: Path, log: LogFn) -> DiagnosisRecord | None:
    path = log_dir / DIAGNOSIS_FILE
    try:
        return msgspec.json.decode(path.read_bytes(), type=DiagnosisRecord)
    except FileNotFoundError:
        return None
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        log(logging.WARNING, f"status report without the diagnosis: {path}: {exc}")
        return None


def read_job_report(
    job_dir: Path,
    *,
    exit_code: int,
    s3: S3Config | None,
    upload: UploadResult | None,
    log: LogFn = null_log,
    analysis: AnalysisResult | None = None,
) -> JobReport | None:
    """The report of the job in ``job_dir`` (its ``logs/`` folder holds what the run wrote);
    the diagnosis only for a failed run, the uploads only after a successful upload."""
    log_dir = job_dir / "logs"
    uploads = None
    if s3 is not None and upload is not None and upload.ok:
        uploads = build_uploads(s3, upload)
    return build_job_report(
        results=_read_results(job_dir, log_dir, log),
        diagnosis=_read_diagnosis(log_dir, log) if exit_code != 0 else None,
        uploads=uploads,
        analysis=read_analysis(log_dir, analysis),
    )
