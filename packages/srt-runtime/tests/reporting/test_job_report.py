"""The job report of the final status event: built from the rollup, the diagnosis and the upload
(pure parts table-tested), read from a job folder, carried by the final event only, and sent
again without it to a collector that refuses it."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import msgspec
import pytest
from rep_collector import running_collector
from rt_plans import fake, plan, spec

from srt_runtime.diagnosis import (
    DIAGNOSIS_FILE,
    DiagnosisRecord,
    Failure,
    build_diagnosis_record,
    render_diagnosis,
    write_diagnosis_record,
)
from srt_runtime.plan_io import write_plan
from srt_runtime.reporting.job_report import MAX_LINKED, JobReport
from srt_runtime.reporting.job_report_read import (
    build_results,
    build_uploads,
    read_job_report,
    s3_http_url,
)
from srt_runtime.reporting.s3 import UploadResult
from srt_runtime.reporting.status import JobUpdate, StatusReporter
from srt_runtime.reporting.status_sink import build_job_update
from srt_schema.recipe import S3Config
from srt_schema.rollup import Rollup, Validity, ValidityReason

NOW = 1_764_000_000.0


def _run(concurrency: int, **extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "concurrency": concurrency,
        "throughput_toks": 100.0 * concurrency,
        "request_throughput": 1.0,
        "ttft_mean_ms": 20.0,
        "ttft_p99_ms": 40.0 + concurrency,
        "tpot_mean_ms": 1.0,
        "tpot_p99_ms": 2.0,
        "itl_mean_ms": 1.0,
        "itl_p99_ms": 3.0 + concurrency,
        "e2el_mean_ms": 90.0,
        "completed_requests": 10 * concurrency,
        "total_input_tokens": 1000,
        "total_output_tokens": 500,
        "total_token_throughput": 300.0,
        "ttft_median_ms": 10.0 + concurrency,
        "tpot_median_ms": 1.0,
        "itl_median_ms": 0.5 + concurrency,
    }
    doc.update(extra)
    return doc


def _energy(joules: float, *, valid: bool = True) -> dict[str, Any]:
    return {
        "gpu_energy_joules": 10.0,
        "gpu_avg_power_w": 300.0,
        "joules_per_output_token": joules,
        "joules_per_total_token": joules / 3,
        "per_gpu_joules": {"n1/0": 10.0},
        "per_node_joules": {"n1": 10.0},
        "cpu_energy_joules": None,
        "per_node_cpu_joules": None,
        "power_coverage_valid": valid,
        "reason_codes": [] if valid else ["gpu_samples_missing"],
    }


def _rollup(*runs: dict[str, Any], **extra: Any) -> Rollup:
    return msgspec.convert(_rollup_doc(*runs, **extra), Rollup)


def _rollup_doc(*runs: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "benchmark_type": "sa-bench",
        "timestamp": "2026-12-01T00:00:00.000000Z",
        "config": {"model": "m", "isl": 128, "osl": 64},
        "runs": list(runs),
        **extra,
    }


def _power(valid: bool) -> dict[str, Any]:
    return {
        "publication_valid": valid,
        "status": "ok" if valid else "invalid",
        "required": False,
        "reason_codes": [] if valid else ["clock_sync_unverified"],
        "missing": None,
    }


INVALID = {
    "verdict": "invalid",
    "reasons": [{"code": "client_saturated", "detail": "event-loop lag p99 120 ms > 50 ms"}],
}


def test_results_are_the_rollup_table_sorted_with_per_gpu_energy_and_verdicts() -> None:
    doc = _rollup(
        _run(16, energy=_energy(0.5), validity=INVALID),
        _run(4, energy=_energy(0.25), validity={"verdict": "valid", "reasons": []}),
        power=_power(True),
        validity=INVALID,
    )
    results = build_results(doc, gpus=4)
    assert [r.concurrency for r in results.runs] == [4, 16]
    low, high = results.runs
    assert (low.output_tok_s, low.output_tok_s_per_gpu) == (400.0, 100.0)
    assert (low.ttft_p50_ms, low.ttft_p99_ms, low.itl_p50_ms, low.itl_p99_ms) == (
        14.0,
        44.0,
        4.5,
        7.0,
    )
    assert (low.completed_requests, low.joules_per_output_token) == (40, 0.25)
    assert low.validity == Validity(verdict="valid")
    reason = ValidityReason(code="client_saturated", detail="event-loop lag p99 120 ms > 50 ms")
    assert high.validity == Validity(verdict="invalid", reasons=(reason,))
    assert results.validity == high.validity
    assert (results.gpus, results.benchmark_type, results.energy_note) == (4, "sa-bench", None)


def test_energy_is_quoted_only_when_the_power_verdict_is_publishable() -> None:
    unpublishable = build_results(_rollup(_run(4, energy=_energy(0.25)), power=_power(False)), 2)
    assert unpublishable.runs[0].joules_per_output_token is None
    assert unpublishable.energy_note == (
        "energy not quoted: the power verdict is not publishable (clock_sync_unverified)"
    )
    window = build_results(
        _rollup(_run(4, energy=_energy(0.25, valid=False)), power=_power(True)), 2
    )
    assert window.runs[0].joules_per_output_token is None
    plain = build_results(_rollup(_run(4)), None)
    assert (plain.runs[0].joules_per_output_token, plain.energy_note, plain.gpus) == (
        None,
        None,
        None,
    )
    assert plain.runs[0].output_tok_s_per_gpu is None  # no worker GPUs: no per-GPU number
    assert plain.validity is None and plain.runs[0].validity is None


@pytest.mark.parametrize(
    ("config", "url"),
    [
        (
            S3Config(bucket="b", endpoint_url="http://127.0.0.1:9000/"),
            "http://127.0.0.1:9000/b/srtslurm/2026-12-01/4242/",
        ),
        (
            S3Config(bucket="logs", region="eu-west-1"),
            "https://logs.s3.eu-west-1.amazonaws.com/srtslurm/2026-12-01/4242/",
        ),
        (
            S3Config(bucket="my.logs"),
            "https://s3.us-east-1.amazonaws.com/my.logs/srtslurm/2026-12-01/4242/",
        ),
    ],
    ids=["endpoint-url", "aws", "dotted-bucket"],
)
def test_s3_http_url(config: S3Config, url: str) -> None:
    s3_url = f"s3://{config.bucket}/srtslurm/2026-12-01/4242/"
    assert s3_http_url(config, s3_url) == url


def test_uploads_name_the_dashboard_rollup_and_text_files_first() -> None:
    files = (
        "tachometer/out-0.parquet",
        "node-01_agg_w0.out",
        "sa-bench_isl_128_osl_64/results_concurrency_4.json",
        "benchmark-rollup.json",
        "perf_dashboard.html",
        "diagnosis.json",
        "bundle.tar.zst",
    )
    upload = UploadResult(url="s3://b/p/4242/", exit_code=0, files=tuple(sorted(files)))
    uploads = build_uploads(S3Config(bucket="b", endpoint_url="http://s3:9"), upload)
    assert uploads.files == (
        "perf_dashboard.html",
        "benchmark-rollup.json",
        "diagnosis.json",
        "node-01_agg_w0.out",
        "sa-bench_isl_128_osl_64/results_concurrency_4.json",
        "bundle.tar.zst",
        "tachometer/out-0.parquet",
    )
    assert (uploads.dashboard, uploads.files_total, uploads.http_url) == (
        "perf_dashboard.html",
        7,
        "http://s3:9/b/p/4242/",
    )
    many = UploadResult(
        url="s3://b/p/", exit_code=0, files=tuple(f"w{i:03}.out" for i in range(MAX_LINKED + 5))
    )
    capped = build_uploads(S3Config(bucket="b"), many)
    assert (len(capped.files), capped.files_total, capped.dashboard) == (
        MAX_LINKED,
        MAX_LINKED + 5,
        None,
    )


def _failure(log: Path) -> Failure:
    return Failure(
        what="agg_0_node-01",
        node="node-01",
        exit_code=3,
        log_path=str(log),
        reason="worker agg_0_node-01 exited with code 3",
        detected_at=1.0,
    )


def test_the_diagnosis_record_has_the_printed_header_and_log_lines(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "node-01_agg_w0.out"
    log.parent.mkdir()
    tail = [f"step {i}" for i in range(30)]
    tail += ["Traceback (most recent call last):", '  File "w.py", line 3', "RuntimeError: boom"]
    record = build_diagnosis_record(_failure(log), tail, log.parent)
    assert (record.what, record.node, record.exit_code, record.log_file) == (
        "agg_0_node-01",
        "node-01",
        3,
        "node-01_agg_w0.out",
    )
    assert record.log_excerpt[-1] == "| RuntimeError: boom"
    assert record.log_excerpt[0].startswith("... ") and "not shown" in record.log_excerpt[0]
    printed = render_diagnosis(_failure(log), tail).splitlines()
    for line in record.log_excerpt:
        assert "    " + line in printed
    path = write_diagnosis_record(log.parent, _failure(log), tail)
    assert path == log.parent / DIAGNOSIS_FILE
    assert msgspec.json.decode(path.read_bytes(), type=DiagnosisRecord) == record
    outside = build_diagnosis_record(_failure(tmp_path / "elsewhere.out"), [], log.parent)
    assert (outside.log_file, outside.log_excerpt) == (None, ())


def _job_dir(tmp_path: Path, *, rollup: dict[str, Any] | None) -> Path:
    job_dir = tmp_path / "job"
    (job_dir / "logs").mkdir(parents=True)
    workers = [spec(f"agg_{i}", fake(), gpus=(2 * i, 2 * i + 1)) for i in range(2)]
    write_plan(plan(*workers, spec("bench", fake(), kind="benchmark")), job_dir / "plan.json")
    if rollup is not None:
        (job_dir / "logs" / "benchmark-rollup.json").write_text(json.dumps(rollup))
    return job_dir


def test_read_job_report_from_a_job_folder(tmp_path: Path) -> None:
    job_dir = _job_dir(tmp_path, rollup=_rollup_doc(_run(4)))
    log = job_dir / "logs" / "w.out"
    write_diagnosis_record(job_dir / "logs", _failure(log), ["RuntimeError: boom"])
    s3 = S3Config(bucket="b", endpoint_url="http://s3:9")
    upload = UploadResult(url="s3://b/x/", exit_code=0, files=("perf_dashboard.html", "w.out"))
    failed = read_job_report(job_dir, exit_code=3, s3=s3, upload=upload)
    assert failed is not None and failed.results is not None and failed.uploads is not None
    assert failed.results.gpus == 4  # the GPUs of the plan's two workers
    assert failed.results.runs[0].output_tok_s_per_gpu == 100.0
    assert failed.diagnosis is not None and failed.diagnosis.log_file == "w.out"
    assert failed.uploads.dashboard == "perf_dashboard.html"
    # A run that succeeded sends no diagnosis; a failed upload sends no uploads.
    lost = UploadResult(url="s3://b/x/", exit_code=11, error="boom")
    passed = read_job_report(job_dir, exit_code=0, s3=s3, upload=lost)
    assert passed == JobReport(results=failed.results)


def test_missing_or_broken_files_leave_their_part_out(tmp_path: Path) -> None:
    lines: list[tuple[int, str]] = []
    job_dir = _job_dir(tmp_path, rollup=None)
    assert read_job_report(job_dir, exit_code=1, s3=None, upload=None) is None
    (job_dir / "logs" / "benchmark-rollup.json").write_text("{not json")
    (job_dir / "logs" / DIAGNOSIS_FILE).write_text('{"what": 1}')
    report = read_job_report(
        job_dir, exit_code=1, s3=None, upload=None, log=lambda lvl, m: lines.append((lvl, m))
    )
    assert report is None
    rollup, diagnosis = (m for _, m in lines)
    assert {lvl for lvl, _ in lines} == {logging.WARNING}
    assert rollup.startswith(f"status report without results: {job_dir}/logs/benchmark-rollup")
    assert diagnosis.startswith(f"status report without the diagnosis: {job_dir}/logs/diagnosis")


def _report() -> JobReport:
    return JobReport(results=build_results(_rollup(_run(4), validity=INVALID), 2))


def test_only_the_final_event_carries_the_report() -> None:
    report = _report()
    final = build_job_update("cleanup", "failed", "boom", 3, now=NOW, report=report)
    assert (final.status, final.report) == ("failed", report)
    running = build_job_update("benchmark", "running", "", None, now=NOW, report=report)
    assert running.report is None
    cleaning = build_job_update("cleanup", "running", "", None, now=NOW, report=report)
    assert cleaning.report is None
    wire = msgspec.json.decode(msgspec.json.encode(final), type=JobUpdate)
    assert wire == final


def test_a_collector_that_refuses_the_report_still_gets_the_final_status() -> None:
    lines: list[tuple[int, str]] = []
    update = build_job_update("cleanup", "completed", "", 0, now=NOW, report=_report())
    with running_collector() as (url, state):
        state.refuse_field = "report"
        reporter = StatusReporter(
            (url,), "4242", token=None, log=lambda lvl, m: lines.append((lvl, m))
        )
        reporter.send(update)
        reporter.send(update)
        summary = reporter.close(5.0)
    puts = [json.loads(r.body) for r in state.of("PUT", "/api/jobs/4242")]
    assert ["report" in body for body in puts] == [True, False, True, False]
    assert puts[1] == msgspec.to_builtins(msgspec.structs.replace(update, report=None))
    assert summary.delivered == {url: 2}
    warnings = [m for lvl, m in lines if lvl == logging.WARNING]
    assert warnings == [
        f"status collector {url} refused the job report (HTTP 422: a collector older than the "
        "report?); the final status is sent without it"
    ]
