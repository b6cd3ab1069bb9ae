"""The status collector keeps and shows the job report of the final event: results, verdicts,
the diagnosis, the files in S3 (stored, served as JSON, rendered as pages); the database of an
older collector is upgraded; streamed logs can be read back."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
from collector_testkit import READ, WRITE, serving, settings

from srt_cli.collector import Collector
from srt_runtime.diagnosis import DiagnosisRecord
from srt_runtime.reporting.job_report import JobReport, JobResults, ResultRow, UploadedFiles
from srt_runtime.reporting.status import StatusReporter
from srt_runtime.reporting.status_sink import build_job_update
from srt_schema.rollup import Validity, ValidityReason

T1 = "2026-11-29T15:00:01Z"
NOW = 1_764_000_000.0
LAG = ValidityReason(code="client_saturated", detail="p99 event-loop lag 84.1 ms > 25 ms")


def _row(concurrency: int, validity: Validity | None = None, **extra: Any) -> ResultRow:
    return ResultRow(
        concurrency=concurrency,
        output_tok_s=1234.567 * concurrency,
        output_tok_s_per_gpu=617.2835 * concurrency,
        ttft_p50_ms=4.4875,
        ttft_p99_ms=43.86,
        itl_p50_ms=0.5553,
        itl_p99_ms=2.2128,
        completed_requests=40 * concurrency,
        validity=validity,
        **extra,
    )


def _report(**parts: Any) -> JobReport:
    results = JobResults(
        benchmark_type="sa-bench",
        gpus=2,
        runs=(
            _row(4, Validity(verdict="valid"), joules_per_output_token=0.0421),
            _row(16, Validity(verdict="invalid", reasons=(LAG,))),
        ),
        validity=Validity(verdict="invalid", reasons=(LAG,)),
    )
    doc: dict[str, Any] = {"results": results, **parts}
    return JobReport(**doc)


DIAGNOSIS = DiagnosisRecord(
    what="agg_0_node-01",
    reason="worker agg_0_node-01 exited with code 3",
    node="node-01",
    exit_code=3,
    log_path="/jobs/4242/logs/node-01_agg_w0.out",
    log_file="node-01_agg_w0.out",
    log_excerpt=(
        "... 28 lines not shown",
        "| Traceback (most recent call last):",
        "| RuntimeError: boom",
    ),
    cause="disk_full",
    cause_title="a file system is full (or over its quota)",
    fix="Free space on the file system named in the log.",
    evidence="OSError: [Errno 28] No space left on device",
)
UPLOADS = UploadedFiles(
    url="s3://b/srtslurm/2026-11-29/4242/",
    http_url="http://127.0.0.1:9000/b/srtslurm/2026-11-29/4242/",
    files=(
        "perf_dashboard.html",
        "benchmark-rollup.json",
        "node-01_agg_w0.out",
        "sa bench/r #1.json",
    ),
    files_total=9,
    dashboard="perf_dashboard.html",
)


@pytest.fixture
def collector(tmp_path: Path) -> Iterator[Collector]:
    with serving(settings(tmp_path)) as running:
        yield running


@pytest.fixture
def client(collector: Collector) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=collector.url, timeout=5.0) as http:
        yield http


def _wire(value: object) -> Any:
    """``value`` as the JSON the collector answers."""
    return json.loads(msgspec.json.encode(value))


def _final(client: httpx.Client, job_id: str, report: JobReport | None, **extra: Any) -> None:
    update = build_job_update("cleanup", "failed", "boom", 3, now=NOW, report=report)
    body = {**msgspec.to_builtins(update), **extra}
    answer = client.put(f"/api/jobs/{job_id}", json=body)
    assert answer.status_code == 200, answer.text


def test_the_report_is_stored_served_and_replaced_only_by_a_new_one(client: httpx.Client) -> None:
    report = _report(diagnosis=DIAGNOSIS, uploads=UPLOADS)
    _final(client, "4242", report)
    doc = client.get("/api/jobs/4242").json()
    assert msgspec.convert(doc["report"], JobReport) == report
    assert doc["report"] == _wire(report)
    # A later event without a report keeps it; a new report replaces it.
    client.put("/api/jobs/4242", json={"status": "failed", "updated_at": T1, "message": "again"})
    assert client.get("/api/jobs/4242").json()["report"] == _wire(report)
    _final(client, "4242", JobReport(diagnosis=DIAGNOSIS))
    assert client.get("/api/jobs/4242").json()["report"] == {"diagnosis": _wire(DIAGNOSIS)}
    # The list says the run's verdict and what failed.
    _final(client, "4243", _report())
    client.put("/api/jobs/4244", json={"status": "workers", "updated_at": T1})
    jobs = {j["job_id"]: j for j in client.get("/api/jobs").json()["jobs"]}
    assert [(jobs[i]["verdict"], jobs[i]["diagnosis"]) for i in ("4242", "4243", "4244")] == [
        (None, "agg_0_node-01"),
        ("invalid", None),
        (None, None),
    ]
    assert client.get("/api/jobs/4244").json()["report"] is None


def test_a_report_that_does_not_decode_is_422_naming_the_field(client: httpx.Client) -> None:
    body = {
        "status": "completed",
        "updated_at": T1,
        "report": {
            "results": {"benchmark_type": "sa-bench", "gpus": 2, "validity": {"verdict": "ok"}}
        },
    }
    answer = client.put("/api/jobs/1", json=body)
    assert (answer.status_code, answer.json()) == (
        422,
        {"detail": "Invalid enum value 'ok' - at `$.report.results.validity.verdict`"},
    )


#: The jobs table of a collector before the job report (schema version 1).
_V1_JOBS = """
CREATE TABLE jobs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL UNIQUE, job_name TEXT,
    cluster TEXT, recipe TEXT, status TEXT NOT NULL, stage TEXT, message TEXT,
    submitted_at TEXT, started_at TEXT, completed_at TEXT, updated_at TEXT, exit_code INTEGER,
    logs_url TEXT, metadata TEXT NOT NULL DEFAULT '{}', artifacts TEXT NOT NULL DEFAULT '{}',
    benchmark_results TEXT, created_at TEXT NOT NULL
);
INSERT INTO jobs (job_id, status, created_at) VALUES ('old', 'completed', '2026-01-01T00:00:00Z');
PRAGMA user_version = 1;
"""


def test_a_version_1_database_is_upgraded_in_place(tmp_path: Path) -> None:
    config = settings(tmp_path)
    config.db_path.parent.mkdir(parents=True)
    with sqlite3.connect(config.db_path) as db:
        db.executescript(_V1_JOBS)
    with serving(config) as running, httpx.Client(base_url=running.url, timeout=5.0) as http:
        old = http.get("/api/jobs/old").json()
        assert (old["status"], old["report"]) == ("completed", None)
        _final(http, "new", _report())
        assert http.get("/api/jobs/new").json()["report"]["results"]["gpus"] == 2
    with sqlite3.connect(config.db_path) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (2,)


def test_the_job_page_shows_results_verdicts_diagnosis_and_links(client: httpx.Client) -> None:
    _final(client, "4242", _report(diagnosis=DIAGNOSIS, uploads=UPLOADS))
    client.post(
        "/api/jobs/4242/logs", params={"file": "node-01_agg_w0.out", "offset": 0}, content=b"x"
    )
    page = client.get("/ui/jobs/4242")
    assert (page.status_code, page.headers["content-type"]) == (200, "text/html; charset=utf-8")
    html = page.text
    assert 'data-final="1"' in html
    # The verdict of the run, with its reason code and what it measured.
    assert '<span class="verdict invalid">invalid</span> 1 reason(s)' in html
    assert "<li><code>client_saturated</code>: p99 event-loop lag 84.1 ms &gt; 25 ms</li>" in html
    # The rollup table: one row per concurrency, J/token shown because one run has it.
    assert (
        "<tr><td>4</td><td>4,938.3</td><td>2,469.1</td><td>4.49</td><td>43.9</td><td>0.56</td>"
        '<td>2.21</td><td>160</td><td>0.0421</td><td><span class="verdict valid">valid</span>'
        "</td></tr>"
    ) in html
    assert (
        '<td>-</td><td><span class="verdict invalid">invalid</span> <code>client_saturated</code>'
        in html
    )
    assert "per GPU: divided by the 2 GPUs of the workers" in html
    # Why it failed: the process, node, exit code, reason, the decisive lines, the log's links.
    assert '<section id="diagnosis"><h2>Why it failed</h2>' in html
    assert "<tr><th>what failed</th><td>agg_0_node-01</td></tr>" in html
    assert "<tr><th>exit code</th><td>3</td></tr>" in html
    # the failure catalog's cause, fix and evidence
    assert (
        "<tr><th>cause</th><td><code>disk_full</code>: a file system is full (or over its quota)"
        "</td></tr>"
    ) in html
    assert "<tr><th>fix</th><td>Free space on the file system named in the log.</td></tr>" in html
    assert "<tr><th>evidence</th><td>OSError: [Errno 28] No space left on device</td></tr>" in html
    assert (
        '<pre class="excerpt">... 28 lines not shown\n| Traceback (most recent call last):\n'
        "| RuntimeError: boom</pre>"
    ) in html
    base = UPLOADS.http_url
    assert (
        f'/jobs/4242/logs/node-01_agg_w0.out (<a href="{base}node-01_agg_w0.out">in S3</a>, '
        '<a class="streamed" data-file="node-01_agg_w0.out" href="#">streamed here</a>)'
    ) in html
    # The dashboard and every named file in S3 (quoted), and how many more the folder holds.
    assert f'<a href="{base}perf_dashboard.html">Open the dashboard</a>' in html
    assert f'<a href="{base}sa%20bench/r%20%231.json">sa bench/r #1.json</a>' in html
    assert "and 5 more file(s) in the folder" in html
    assert "<code>s3://b/srtslurm/2026-11-29/4242/</code>" in html
    # The job list: a coloured row per job, its verdict and what failed.
    listing = client.get("/ui/jobs").text
    assert '<tr class="job status-failed"><td><a href="/jobs/4242">4242</a></td>' in listing
    assert '<span class="culprit">(agg_0_node-01)</span>' in listing


def test_a_job_without_a_report_and_an_empty_list(client: httpx.Client) -> None:
    assert "No jobs yet" in client.get("/ui/jobs").text
    client.put("/api/jobs/7", json={"status": "benchmark", "updated_at": T1})
    running = client.get("/ui/jobs/7").text
    assert 'data-final="0"' in running and "Why it failed" not in running
    assert "sent no report" not in running
    client.put("/api/jobs/7", json={"status": "completed", "updated_at": T1})
    assert "The job sent no report" in client.get("/ui/jobs/7").text
    missing = client.get("/ui/jobs/8")
    assert (missing.status_code, missing.json()) == (
        404,
        {"detail": "job 8 is not known to this collector"},
    )


def test_values_are_escaped_and_only_http_links_are_made(client: httpx.Client) -> None:
    evil = "<script>alert(1)</script>"
    diagnosis = msgspec.structs.replace(DIAGNOSIS, what=evil, log_excerpt=(f"| {evil}",))
    uploads = msgspec.structs.replace(UPLOADS, http_url="javascript:alert(1)//", files=(evil,))
    body = {"metadata": {"job_name": evil}, "message": evil}
    _final(client, "9", _report(diagnosis=diagnosis, uploads=uploads), **body)
    for path in ("/ui/jobs/9", "/ui/jobs"):
        html = client.get(path).text
        assert "<script>" not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
        assert "javascript:" not in html


def test_pages_are_public_and_fragments_need_a_token(tmp_path: Path) -> None:
    config = settings(tmp_path, write=WRITE, read=READ)
    with serving(config) as running, httpx.Client(base_url=running.url, timeout=5.0) as http:
        for page in ("/", "/jobs/4242"):
            shell = http.get(page)
            assert (shell.status_code, shell.headers["content-type"]) == (
                200,
                "text/html; charset=utf-8",
            )
            assert "<title>srtctl status-server</title>" in shell.text
        for path in ("/ui/jobs", "/ui/jobs/4242", "/jobs/4242/x", "/api/jobs/4242/logs?file=a"):
            assert http.get(path).status_code == 401, path
        reader = {"Authorization": f"Bearer {READ}"}
        assert http.get("/ui/jobs", headers=reader).status_code == 200


def test_a_streamed_log_is_read_back(client: httpx.Client) -> None:
    for offset, chunk in ((0, b"line 1\n"), (7, b"RuntimeError: boom\n")):
        params = {"file": "sub/w.out", "offset": offset}
        assert client.post("/api/jobs/5/logs", params=params, content=chunk).status_code == 200
    read = client.get("/api/jobs/5/logs", params={"file": "sub/w.out"})
    assert (read.status_code, read.headers["content-type"], read.text) == (
        200,
        "text/plain; charset=utf-8",
        "line 1\nRuntimeError: boom\n",
    )
    for params, status, detail in (
        ({"file": "nothing.out"}, 404, "job 5 streamed no log 'nothing.out' to this collector"),
        ({"file": "../x"}, 400, None),
        ({"file": "a", "offset": "0"}, 422, "unknown query parameter 'offset'; allowed: file"),
    ):
        answer = client.get("/api/jobs/5/logs", params=params)
        assert answer.status_code == status, params
        if detail is not None:
            assert answer.json() == {"detail": detail}
    unknown = client.get("/api/jobs/6/logs", params={"file": "a"})
    assert unknown.json() == {"detail": "job 6 is not known to this collector"}


def test_the_runtime_reporter_delivers_the_report_to_the_collector(collector: Collector) -> None:
    report = _report(diagnosis=DIAGNOSIS, uploads=UPLOADS)
    reporter = StatusReporter((collector.url,), "77", token=None)
    reporter.send(build_job_update("cleanup", "failed", "", 3, now=NOW, report=report))
    assert reporter.close(5.0).delivered == {collector.url: 1}
    doc = httpx.get(f"{collector.url}/api/jobs/77", timeout=5.0).json()
    assert (doc["status"], doc["exit_code"]) == ("failed", 3)
    assert msgspec.convert(doc["report"], JobReport) == report


def test_the_job_page_shows_the_ai_analysis_or_why_there_is_none(client: httpx.Client) -> None:
    from srt_runtime.reporting.job_report import AnalysisSummary

    text = "The worker ran out of memory <at load>.\nLower max_num_seqs."
    analysis = AnalysisSummary(ok=True, reason="written", file="ai_analysis.md", text=text)
    _final(client, "4242", JobReport(diagnosis=DIAGNOSIS, analysis=analysis))
    html = client.get("/ui/jobs/4242").text
    assert (
        '<section id="ai-analysis"><h2>AI analysis</h2><pre class="analysis">The worker ran out '
        "of memory &lt;at load&gt;.\nLower max_num_seqs.</pre></section>"
    ) in html
    assert html.index("Why it failed") < html.index("AI analysis")
    missing = AnalysisSummary(ok=False, reason="AI analysis skipped: no API key")
    _final(client, "4243", JobReport(diagnosis=DIAGNOSIS, analysis=missing))
    assert "No analysis: AI analysis skipped: no API key" in client.get("/ui/jobs/4243").text
