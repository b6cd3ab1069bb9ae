"""The collector's pages as HTML fragments (pure): the job list and one job's page.

The static page (:mod:`~srt_cli.collector.ui`) fetches ``GET /ui/jobs`` or ``GET /ui/jobs/{id}``
with the reader's token and shows the fragment. Every value is escaped here
(:func:`html.escape`); links go only to this collector's own pages or to ``http(s)://``
addresses the job report gave (the S3 folder), never to anything else. Rendering is
deterministic: the same record gives the same bytes.

A job page, top to bottom: the status and when; the run's validity verdict; the diagnosis of a
failed job (the failing process, node, exit code, reason, the decisive log lines, a link to the
log); the results table (the rollup per concurrency); the dashboard and the uploaded files in S3;
the logs streamed to this collector; the events.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any, Final
from urllib.parse import quote

import msgspec

from srt_runtime.diagnosis import DiagnosisRecord
from srt_runtime.reporting.job_report import (
    AnalysisSummary,
    JobReport,
    JobResults,
    ResultRow,
    UploadedFiles,
)
from srt_schema.rollup import Validity, ValidityReason

__all__ = ["FINAL_STATUSES", "render_job", "render_job_list"]

#: A job in one of these will not change again (its page stops refreshing).
FINAL_STATUSES: Final = ("completed", "failed", "timeout")
_MISSING: Final = "-"


def _e(value: object) -> str:
    return _MISSING if value is None else html.escape(str(value), quote=True)


def _badge(status: str) -> str:
    return f'<span class="badge status-{_e(status)}">{_e(status)}</span>'


def _verdict_badge(verdict: str | None) -> str:
    if verdict is None:
        return '<span class="verdict none">no verdict</span>'
    return f'<span class="verdict {_e(verdict)}">{_e(verdict)}</span>'


def _number(value: float | None, digits: int | None = None) -> str:
    """A readable number: fewer decimals for larger values, thousands separated."""
    if value is None:
        return _MISSING
    if digits is None:
        size = abs(value)
        digits = 0 if size >= 1000 else 1 if size >= 10 else 2 if size >= 0.1 else 4
    return f"{value:,.{digits}f}"


def _job_href(job_id: str) -> str:
    return "/jobs/" + quote(job_id, safe="")


def _safe_base(url: str) -> str | None:
    """An ``http(s)://`` address from a job report, else None (not linked)."""
    return url if url.startswith(("http://", "https://")) and '"' not in url else None


def _file_href(base: str, file: str) -> str:
    return base.rstrip("/") + "/" + quote(file)


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], cls: str) -> str:
    """A table of already-escaped cells."""
    out = [f'<table class="{cls}"><thead><tr>']
    out.extend(f"<th>{cell}</th>" for cell in head)
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


# -- the job list ----------------------------------------------------------------------------


def render_job_list(jobs: Sequence[Mapping[str, Any]], total: int) -> str:
    """The table of jobs, newest first, one colour per status."""
    if not jobs:
        return (
            '<p class="empty">No jobs yet. Point a recipe at this collector with '
            "<code>reporting.status.endpoint</code>.</p>"
        )
    out = ['<table class="jobs"><thead><tr>']
    for name in ("job", "name", "cluster", "status", "verdict", "stage", "message", "updated"):
        out.append(f"<th>{name}</th>")
    out.append("</tr></thead><tbody>")
    for job in jobs:
        status = str(job["status"])
        verdict = job.get("verdict")
        failed = job.get("diagnosis")
        message = _e(job.get("message"))
        if failed:
            message += f' <span class="culprit">({_e(failed)})</span>'
        cells = (
            f'<a href="{_job_href(str(job["job_id"]))}">{_e(job["job_id"])}</a>',
            _e(job.get("job_name")),
            _e(job.get("cluster")),
            _badge(status),
            _verdict_badge(verdict) if verdict is not None else _MISSING,
            _e(job.get("stage")),
            message,
            _e(job.get("updated_at")),
        )
        out.append(f'<tr class="job status-{_e(status)}">')
        out.extend(f"<td>{cell}</td>" for cell in cells)
        out.append("</tr>")
    out.append("</tbody></table>")
    if total > len(jobs):
        out.append(f'<p class="note">{total} jobs, the newest {len(jobs)} shown</p>')
    return "".join(out)


# -- one job ---------------------------------------------------------------------------------


def _report(record: Mapping[str, Any]) -> tuple[JobReport | None, str | None]:
    raw = record.get("report")
    if raw is None:
        return None, None
    try:
        return msgspec.convert(raw, JobReport), None
    except msgspec.ValidationError as exc:
        return None, f"the stored job report does not decode: {exc}"


def _facts(record: Mapping[str, Any]) -> str:
    metadata = record.get("metadata") or {}
    rows = [
        ("cluster", record.get("cluster")),
        ("stage", record.get("stage")),
        ("message", record.get("message")),
        ("exit code", record.get("exit_code")),
        ("submitted", record.get("submitted_at")),
        ("started", record.get("started_at")),
        ("completed", record.get("completed_at")),
        ("recipe", record.get("recipe")),
        ("head node", metadata.get("head_node")),
        ("log folder", metadata.get("log_dir")),
    ]
    body = "".join(f"<tr><th>{k}</th><td>{_e(v)}</td></tr>" for k, v in rows if v is not None)
    return f'<table class="facts">{body}</table>'


def _reasons(reasons: tuple[ValidityReason, ...], cls: str) -> str:
    items = []
    for reason in reasons:
        detail = f": {_e(reason.detail)}" if reason.detail else ""
        items.append(f"<li><code>{_e(reason.code)}</code>{detail}</li>")
    return f'<ul class="{cls}">{"".join(items)}</ul>' if items else ""


def _validity(validity: Validity) -> str:
    unchecked = ""
    if validity.not_checked:
        unchecked = "<p>Not checked (no evidence):</p>" + _reasons(
            validity.not_checked, "unchecked"
        )
    return _reasons(validity.reasons, "reasons") + unchecked


def _verdict_section(results: JobResults | None) -> str:
    if results is None:
        return ""
    validity = results.validity
    if validity is None:
        return (
            '<section id="verdict"><h2>Validity</h2><p>'
            f"{_verdict_badge(None)} the rollup carries no validity verdict</p></section>"
        )
    return (
        f'<section id="verdict"><h2>Validity</h2><p>{_verdict_badge(validity.verdict)} '
        f"{len(validity.reasons)} reason(s)</p>{_validity(validity)}</section>"
    )


def _log_link(file: str | None, uploads: UploadedFiles | None, streamed: set[str]) -> str:
    if file is None:
        return ""
    links = []
    base = _safe_base(uploads.http_url) if uploads is not None else None
    if base is not None and uploads is not None and file in uploads.files:
        links.append(f'<a href="{_e(_file_href(base, file))}">in S3</a>')
    if file in streamed:
        links.append(f'<a class="streamed" data-file="{_e(file)}" href="#">streamed here</a>')
    return f" ({', '.join(links)})" if links else ""


def _cause_cell(diagnosis: DiagnosisRecord) -> str | None:
    if diagnosis.cause is None:
        return None
    if diagnosis.cause_title:
        return f"<code>{_e(diagnosis.cause)}</code>: {_e(diagnosis.cause_title)}"
    return _e(diagnosis.cause)


def _diagnosis_section(
    diagnosis: DiagnosisRecord | None, uploads: UploadedFiles | None, streamed: set[str]
) -> str:
    if diagnosis is None:
        return ""
    rows = [
        ("what failed", _e(diagnosis.what)),
        ("node", _e(diagnosis.node) if diagnosis.node is not None else None),
        ("exit code", _e(diagnosis.exit_code) if diagnosis.exit_code is not None else None),
        ("log line", _e(diagnosis.log_line) if diagnosis.log_line is not None else None),
        ("reason", _e(diagnosis.reason)),
        # the failure catalog's verdict (records written before it existed have none)
        ("cause", _cause_cell(diagnosis)),
        ("fix", _e(diagnosis.fix) if diagnosis.fix else None),
        ("evidence", _e(diagnosis.evidence) if diagnosis.evidence else None),
        (
            "log",
            _e(diagnosis.log_path) + _log_link(diagnosis.log_file, uploads, streamed)
            if diagnosis.log_path is not None
            else None,
        ),
    ]
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows if v is not None)
    excerpt = ""
    if diagnosis.log_excerpt:
        lines = "\n".join(_e(line) for line in diagnosis.log_excerpt)
        excerpt = f'<pre class="excerpt">{lines}</pre>'
    return (
        f'<section id="diagnosis"><h2>Why it failed</h2><table class="facts">{body}</table>'
        f"{excerpt}</section>"
    )


def _analysis_section(analysis: AnalysisSummary | None) -> str:
    """The AI analysis of a failed run (sent in the job report), or why there is none."""
    if analysis is None:
        return ""
    if not analysis.ok or analysis.text is None:
        return (
            '<section id="ai-analysis"><h2>AI analysis</h2>'
            f'<p class="note">No analysis: {_e(analysis.reason)}</p></section>'
        )
    cut = (
        f'<p class="note">Cut here; the whole text is {_e(analysis.file)} in the log folder.</p>'
        if analysis.truncated
        else ""
    )
    return (
        '<section id="ai-analysis"><h2>AI analysis</h2>'
        f'<pre class="analysis">{_e(analysis.text)}</pre>{cut}</section>'
    )


def _row_verdict(row: ResultRow) -> str:
    if row.validity is None:
        return _MISSING
    codes = ", ".join(_e(r.code) for r in row.validity.reasons)
    return _verdict_badge(row.validity.verdict) + (f" <code>{codes}</code>" if codes else "")


def _results_section(results: JobResults | None) -> str:
    if results is None:
        return ""
    energy = any(row.joules_per_output_token is not None for row in results.runs)
    head = [
        "concurrency",
        "output tok/s",
        "output tok/s per GPU",
        "TTFT p50 (ms)",
        "TTFT p99 (ms)",
        "ITL p50 (ms)",
        "ITL p99 (ms)",
        "requests",
        *(["J / output token"] if energy else []),
        "verdict",
    ]
    rows = []
    for run in results.runs:
        cells = [
            _e(run.concurrency),
            _number(run.output_tok_s, 1),
            _number(run.output_tok_s_per_gpu, 1),
            _number(run.ttft_p50_ms),
            _number(run.ttft_p99_ms),
            _number(run.itl_p50_ms),
            _number(run.itl_p99_ms),
            _e(run.completed_requests),
            *([_number(run.joules_per_output_token)] if energy else []),
            _row_verdict(run),
        ]
        rows.append(cells)
    notes = [f"{_e(results.benchmark_type)}"]
    notes.append(
        f"per GPU: divided by the {results.gpus} GPUs of the workers"
        if results.gpus
        else "per GPU: the plan names no worker GPUs"
    )
    if results.energy_note:
        notes.append(_e(results.energy_note))
    table = _table(head, rows, "results") if rows else "<p>The rollup has no runs.</p>"
    return (
        f'<section id="results"><h2>Results</h2>{table}'
        f'<p class="note">{"; ".join(notes)}</p></section>'
    )


def _uploads_section(uploads: UploadedFiles | None) -> str:
    if uploads is None:
        return ""
    base = _safe_base(uploads.http_url)
    out = ['<section id="uploads"><h2>Dashboard and logs in S3</h2>']
    if uploads.dashboard is not None and base is not None:
        href = _e(_file_href(base, uploads.dashboard))
        out.append(f'<p class="dashboard"><a href="{href}">Open the dashboard</a></p>')
    out.append(f"<p>Folder: <code>{_e(uploads.url)}</code></p>")
    items = []
    for file in uploads.files:
        if base is None:
            items.append(f"<li><code>{_e(file)}</code></li>")
        else:
            items.append(f'<li><a href="{_e(_file_href(base, file))}">{_e(file)}</a></li>')
    out.append(f'<ul class="files">{"".join(items)}</ul>')
    if uploads.files_total > len(uploads.files):
        more = uploads.files_total - len(uploads.files)
        out.append(f'<p class="note">and {more} more file(s) in the folder</p>')
    out.append("</section>")
    return "".join(out)


def _streamed_section(logs: Sequence[Mapping[str, Any]]) -> str:
    if not logs:
        return ""
    rows = [
        [
            f'<a class="streamed" data-file="{_e(log["file"])}" href="#">{_e(log["file"])}</a>',
            _e(log.get("size")),
            "yes" if log.get("final") else "no",
        ]
        for log in logs
    ]
    table = _table(["file", "bytes", "complete"], rows, "streamed")
    return f'<section id="streamed"><h2>Logs streamed to this collector</h2>{table}</section>'


def _events_section(events: Sequence[Mapping[str, Any]]) -> str:
    rows = [
        [
            _e(event.get("created_at")),
            _badge(str(event["status"])),
            _e(event.get("stage")),
            _e(event.get("message")),
        ]
        for event in events
    ]
    table = _table(["at", "status", "stage", "message"], rows, "events")
    return f'<section id="events"><h2>Events</h2>{table}</section>'


def render_job(record: Mapping[str, Any]) -> str:
    """One job's page; ``record`` is what ``GET /api/jobs/{id}`` answers."""
    status = str(record["status"])
    report, problem = _report(record)
    results = report.results if report is not None else None
    uploads = report.uploads if report is not None else None
    logs = list(record.get("logs") or [])
    streamed = {str(log["file"]) for log in logs}
    final = "1" if status in FINAL_STATUSES else "0"
    out = [
        f'<article class="job status-{_e(status)}" data-final="{final}">',
        f"<h1>{_e(record.get('job_name'))} <small>{_e(record['job_id'])}</small> "
        f"{_badge(status)}</h1>",
        '<p><a href="/">all jobs</a></p>',
        _facts(record),
    ]
    if problem is not None:
        out.append(f'<p class="note">{_e(problem)}</p>')
    out.append(_verdict_section(results))
    out.append(_diagnosis_section(report.diagnosis if report else None, uploads, streamed))
    out.append(_analysis_section(report.analysis if report else None))
    out.append(_results_section(results))
    out.append(_uploads_section(uploads))
    if report is None and status in FINAL_STATUSES:
        out.append('<p class="note">The job sent no report (results, diagnosis, uploads).</p>')
    out.append(_streamed_section(logs))
    out.append(_events_section(record.get("events") or []))
    out.append("</article>")
    return "".join(part for part in out if part)
