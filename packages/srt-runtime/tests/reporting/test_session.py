"""A realistic run of every reporting component together: servers up (no secret is ever
written anywhere), and servers down or hanging (time bounded, each failure reported once)."""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from rep_ai import running_ai
from rep_collector import closed_port_url, running_collector, silent_server
from rep_s3 import KEY_ID, client, keys, new_bucket, running_s3

from srt_runtime.clock import SystemClock
from srt_runtime.lockfile import update_lockfile
from srt_runtime.reporting.fingerprint import capture_fingerprint, write_fingerprint
from srt_runtime.reporting.identity import observed_from_fingerprint, render_banner, verify_identity
from srt_runtime.reporting.lock_sections import (
    build_lock_sections,
    first_fingerprint,
    read_fingerprints,
)
from srt_runtime.reporting.session import ReportingSession
from srt_runtime.status import FileStatusSink
from srt_schema.recipe import (
    AIAnalysisConfig,
    IdentityConfig,
    IdentityModelConfig,
    ReportingConfig,
    ReportingStatusConfig,
    S3Config,
)

CANARIES = {
    "SRTCTL_STATUS_TOKEN": "canary-status-token-7f3a91",
    "AWS_SECRET_ACCESS_KEY": "canary-aws-secret-2b8c44",
    "OPENROUTER_API_KEY": "canary-openrouter-9d1e07",
    "HF_TOKEN": "canary-hf-token-5c6d28",
    "DYN_AUTH_HEADER": "canary-dyn-auth-0a9b3c",
}
ENVIRON = {
    **CANARIES,
    "AWS_ACCESS_KEY_ID": KEY_ID,
    "NCCL_DEBUG": "INFO",
    "RUN_EVAL": "true",
    "PATH": "/usr/bin:/bin",
}
CONFIG_YAML = """\
name: canary-run
reporting:
  status:
    endpoint: http://collector.invalid
    token_env: SRTCTL_STATUS_TOKEN
"""


class FileLog:
    """The orchestrator log: every reporting message, as the sweep log would get it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines: list[tuple[int, str]] = []

    def __call__(self, level: int, message: str) -> None:
        self.lines.append((level, message))
        with self.path.open("a") as handle:
            handle.write(f"{logging.getLevelName(level)} {message}\n")

    def at_least(self, level: int) -> list[str]:
        return [m for lvl, m in self.lines if lvl >= level]


@pytest.fixture
def job(tmp_path: Path) -> Iterator[Path]:
    job_dir = tmp_path / "outputs" / "4242"
    logs = job_dir / "logs"
    logs.mkdir(parents=True)
    (job_dir / "config.yaml").write_text(CONFIG_YAML)
    (job_dir / "sbatch_script.sh").write_text("#!/bin/bash\nsrun true\n")
    (job_dir / "4242.json").write_text(json.dumps({"job_id": "4242"}))
    (logs / "benchmark.out").write_text("request rate: inf\nERROR: 12% of requests failed\n")
    (logs / "node-01_agg_w0.out").write_text("worker ready\n" * 50)
    (logs / "artifacts" / "run").mkdir(parents=True)
    (logs / "artifacts" / "run" / "profile_export.jsonl").write_text('{"ttft": 1}\n' * 10)
    write_fingerprint(
        logs / "fingerprint_agg_w0.json", capture_fingerprint(ENVIRON, model_dir=None, now=0.0)
    )
    yield job_dir


def _lockfile(job_dir: Path, exit_code: int) -> None:
    """The end-of-run lockfile: the supervisor's writer fed with the reporting sections."""
    prints = read_fingerprints(job_dir / "logs")
    seen = observed_from_fingerprint(first_fingerprint(prints) or {})
    identity = IdentityConfig(
        model=IdentityModelConfig(repo="Qwen/Qwen3-0.6B"), frameworks={"ai-dynamo": "1.6.1"}
    )
    verification = verify_identity(identity, seen)
    assert verification is not None
    assert render_banner(verification)[-1] == "  1 verified, 1 declared, 0 FAILED"
    update_lockfile(
        job_dir,
        exit_code=exit_code,
        **build_lock_sections(verification=verification, fingerprints=prints),
    )


def _assert_no_canary(blobs: dict[str, bytes]) -> None:
    for where, data in blobs.items():
        for name, secret in CANARIES.items():
            assert secret.encode() not in data, f"${name} leaked into {where}"


def test_realistic_run_uses_the_secrets_and_never_writes_them(job: Path) -> None:
    sweep = FileLog(job / "logs" / "sweep_4242.log")
    clock = SystemClock()
    with (
        running_collector() as (collector, state),
        running_s3() as s3,
        running_ai() as (ai_base, ai_state),
    ):
        bucket = new_bucket(s3)
        config = ReportingConfig(
            status=ReportingStatusConfig(endpoint=collector, logging_stream_interval=0.05),
            s3=S3Config(bucket=bucket, endpoint_url=s3),
            ai_analysis=AIAnalysisConfig(enabled=True),
        )
        session = ReportingSession.open(
            config,
            job_id="4242",
            job_dir=job,
            environ=ENVIRON,
            local=FileStatusSink(job, "4242", clock),
            wall=clock.wall,
            cluster="lab",
            log=sweep,
        )
        session.sink.emit("starting", "running")
        session.sink.emit("workers", "running")
        session.sink.emit("benchmark", "running")
        time.sleep(0.2)  # a few streaming ticks
        _lockfile(job, 1)
        outcome = session.finish(exit_code=1, ai_base_url=ai_base)
        session.sink.emit("cleanup", "failed", "benchmark exited with 1", 1)
        summary = session.close(5.0)
        shipped = {
            key: client(s3).get_object(Bucket=bucket, Key=key)["Body"].read()
            for key in keys(s3, bucket)
        }
    assert outcome.upload is not None and outcome.upload.ok
    assert outcome.analysis is not None and outcome.analysis.ok
    assert outcome.streamed is True
    assert summary.delivered == {collector: 5} and summary.dropped == 0
    puts = state.of("PUT", "/api/jobs/4242")
    assert {r.headers["Authorization"] for r in puts} == {
        f"Bearer {CANARIES['SRTCTL_STATUS_TOKEN']}"
    }
    assert ai_state.headers[0]["Authorization"] == f"Bearer {CANARIES['OPENROUTER_API_KEY']}"
    final = json.loads(puts[-1].body)
    assert (final["status"], final["exit_code"], final["logs_url"]) == (
        "failed",
        1,
        outcome.upload.url,
    )
    prefix = f"srtslurm/{dt.datetime.now(dt.UTC).date()}/4242/"
    assert {prefix + "config.yaml", prefix + "bundle.tar.zst", prefix + "benchmark.out"} <= set(
        shipped
    )
    assert bytes(state.logs["benchmark.out"]) == (job / "logs" / "benchmark.out").read_bytes()
    assert (job / "logs" / "ai_analysis.md").exists()
    # issue 31 item 4: the analysis ran before the upload (its file reached S3) and its text is
    # in the final event's report, which the collector's job page shows
    analysis = (job / "logs" / "ai_analysis.md").read_text()
    assert shipped[prefix + "ai_analysis.md"].decode() == analysis
    assert final["report"]["analysis"] == {
        "ok": True,
        "reason": "written",
        "file": "ai_analysis.md",
        "text": analysis,
    }
    assert "fingerprints" in yaml.safe_load((job / "recipe.lock.yaml").read_text())["lock"]
    blobs = {str(p): p.read_bytes() for p in job.rglob("*") if p.is_file()}
    assert len(blobs) >= 12
    blobs.update({f"s3://{key}": body for key, body in shipped.items()})
    blobs.update({f"collector {r.method} {r.path}": r.body for r in state.requests})
    blobs.update({f"streamed {name}": bytes(data) for name, data in state.logs.items()})
    blobs["log lines"] = "\n".join(m for _, m in sweep.lines).encode()
    _assert_no_canary(blobs)


def test_everything_down_costs_bounded_time_and_reports_each_failure_once(job: Path) -> None:
    sweep = FileLog(job / "logs" / "sweep_4242.log")
    clock = SystemClock()
    collector = closed_port_url()
    s3_down = closed_port_url()
    with silent_server() as ai_hung:
        config = ReportingConfig(
            status=ReportingStatusConfig(endpoint=collector, logging_stream_interval=0.05),
            s3=S3Config(bucket="srt-results", endpoint_url=s3_down),
            ai_analysis=AIAnalysisConfig(enabled=True),
        )
        started = time.monotonic()
        session = ReportingSession.open(
            config,
            job_id="4242",
            job_dir=job,
            environ=ENVIRON,
            local=FileStatusSink(job, "4242", clock),
            wall=clock.wall,
            log=sweep,
            status_timeout=0.3,
        )
        session.sink.emit("starting", "running")
        session.sink.emit("workers", "running")
        session.sink.emit("benchmark", "running")
        emitting = time.monotonic() - started
        outcome = session.finish(
            exit_code=3,
            s3_connect_timeout=0.3,
            s3_timeout=60.0,  # a cap only: the refused port fails at once, boto3's start-up not
            ai_timeout=1.0,
            ai_base_url=ai_hung,
            stream_stop=1.0,
        )
        session.sink.emit("cleanup", "failed", "", 3)
        session.close(1.0)
        elapsed = time.monotonic() - started
    # documented bound: ai_timeout 1 + S3 (refused at once) + stream_stop 1 + close 1; that emit
    # only queues is test_status.py's hung-collector test
    assert emitting < 30.0  # hang guard: 100 x the 0.3 s status timeout of 3 emits
    assert elapsed < 45.0  # hang guard: 15 x the 3 s of bounds; the silent AI server never answers
    assert outcome.upload is not None and outcome.upload.exit_code == 11
    assert outcome.analysis is not None and not outcome.analysis.ok
    assert outcome.streamed is False
    last = json.loads((job / "status.json").read_text())
    assert (last["status"], last["exit_code"]) == ("failed", 3)  # the job's own code, unchanged
    warnings = sweep.at_least(logging.WARNING)
    assert len(warnings) == 4, warnings
    by_kind = {m.split(" ", 1)[0]: m for m in warnings}
    assert sorted(by_kind) == ["AI", "S3", "log", "status"]
    assert by_kind["status"].startswith(
        f"status update to {collector}/api/jobs/4242 lost after 2 attempts: ConnectError"
    )
    assert by_kind["log"].startswith(f"log streaming to {collector} failed: ConnectError")
    assert by_kind["S3"].startswith("S3 upload to s3://srt-results/srtslurm/")
    assert "EndpointConnectionError" in by_kind["S3"]
    assert by_kind["AI"] == (
        f"AI analysis at {ai_hung}/chat/completions timed out after 1s; "
        "ai_analysis.md was not written"
    )
    blobs = {str(p): p.read_bytes() for p in job.rglob("*") if p.is_file()}
    blobs["log lines"] = "\n".join(m for _, m in sweep.lines).encode()
    _assert_no_canary(blobs)
