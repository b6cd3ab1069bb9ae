"""S3 upload against moto's real S3 server on 127.0.0.1 (no stubbed client)."""

from __future__ import annotations

import datetime as dt
import io
import json
import shutil
import subprocess
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from rep_collector import closed_port_url, silent_server
from rep_s3 import KEY_ID, client, keys, new_bucket, running_s3

from srt_runtime.reporting.errors import ReportingConfigError
from srt_runtime.reporting.s3 import (
    DEFAULT_ARCHIVE,
    DEFAULT_EXCLUDE,
    build_target,
    effective_archive,
    effective_exclude,
    stage_job_files,
    upload_results,
)
from srt_schema.recipe import S3Config

NOW = dt.datetime(2026, 3, 4, 23, 30, tzinfo=dt.UTC)
SECRET = "canary-secret-0f9e8d7c6b5a"
ENV = {"AWS_ACCESS_KEY_ID": KEY_ID, "AWS_SECRET_ACCESS_KEY": SECRET}


class Logs:
    def __init__(self) -> None:
        self.lines: list[tuple[int, str]] = []

    def __call__(self, level: int, message: str) -> None:
        self.lines.append((level, message))


@pytest.fixture(scope="module")
def s3() -> Iterator[str]:
    with running_s3() as endpoint:
        yield endpoint


def _write(root: Path, rel: str, text: str = "x") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    root = tmp_path / "4242" / "logs"
    for rel in (
        "sweep_4242.log",
        "benchmark.out",
        "benchmark-rollup.json",
        "power/samples.csv",
        "artifacts/run1/server_metrics_export.json",  # default exclude
        "artifacts/run1/inputs.json",  # default exclude
        "artifacts/run1/profile_export_aiperf.json",
        "artifacts/run1/profile_export.jsonl",  # default archive
        "sa-bench_isl_8_osl_8/c1/deep/profile_export.jsonl",  # default archive (**)
        "perf_dashboard_bundle/app.js",  # default exclude
        "perf_dashboard.json",  # default exclude
        "perf_dashboard.html",
    ):
        _write(root, rel, f"content of {rel}\n")
    return root


def test_target_uses_prefix_date_and_job() -> None:
    day = dt.date(2026, 3, 4)
    assert build_target(S3Config(bucket="b"), "4242", day).url == "s3://b/srtslurm/2026-03-04/4242/"
    target = build_target(S3Config(bucket="b", prefix="/team/runs/"), "7", day)
    assert (target.bucket, target.key_prefix) == ("b", "team/runs/2026-03-04/7/")


def test_defaults_apply_only_when_unset() -> None:
    assert effective_exclude(S3Config(bucket="b")) == DEFAULT_EXCLUDE
    assert effective_archive(S3Config(bucket="b")) == DEFAULT_ARCHIVE
    assert effective_exclude(S3Config(bucket="b", exclude=())) == ()
    assert effective_archive(S3Config(bucket="b", archive=())) == ()


def test_archive_pattern_outside_the_log_dir_is_rejected() -> None:
    with pytest.raises(ReportingConfigError) as err:
        effective_archive(S3Config(bucket="b", archive=("../secrets/*",)))
    assert str(err.value) == (
        "$.reporting.s3.archive: '../secrets/*' is not a pattern relative to the log directory; "
        "use a relative glob such as 'artifacts/**/profile_export.jsonl'"
    )


def test_sync_with_default_patterns_and_zstd_bundle(s3: str, log_dir: Path, tmp_path: Path) -> None:
    zstd = shutil.which("zstd")
    assert zstd is not None, "the zstd command is needed (Debian package zstd)"
    bucket = new_bucket(s3)
    config = S3Config(bucket=bucket, endpoint_url=s3)
    result = upload_results(config, log_dir=log_dir, job_id="4242", environ=ENV, now=NOW, zstd=zstd)
    assert (result.exit_code, result.error, result.bundle) == (0, None, "bundle.tar.zst")
    assert result.url == f"s3://{bucket}/srtslurm/2026-03-04/4242/"
    prefix = "srtslurm/2026-03-04/4242/"
    assert keys(s3, bucket) == [
        prefix + rel
        for rel in (
            "artifacts/run1/profile_export_aiperf.json",
            "benchmark-rollup.json",
            "benchmark.out",
            "bundle.tar.zst",
            "perf_dashboard.html",
            "postprocess-status.json",
            "postprocess.log",
            "power/samples.csv",
            "sweep_4242.log",
        )
    ]
    body = client(s3).get_object(Bucket=bucket, Key=prefix + "bundle.tar.zst")["Body"].read()
    tar_bytes = subprocess.run([zstd, "-d", "-c"], input=body, capture_output=True, check=True)
    with tarfile.open(fileobj=io.BytesIO(tar_bytes.stdout)) as tar:
        assert tar.getnames() == [
            "artifacts/run1/profile_export.jsonl",
            "sa-bench_isl_8_osl_8/c1/deep/profile_export.jsonl",
        ]
        member = tar.extractfile("artifacts/run1/profile_export.jsonl")
        assert member is not None
        assert member.read() == b"content of artifacts/run1/profile_export.jsonl\n"
    status = json.loads((log_dir / "postprocess-status.json").read_text())
    assert status == {
        "s3_url": result.url,
        "exclude": list(DEFAULT_EXCLUDE),
        "archive": list(DEFAULT_ARCHIVE),
        "exit_code": 0,
        "objects": 9,
    }
    again = upload_results(config, log_dir=log_dir, job_id="4242", environ=ENV, now=NOW, zstd=zstd)
    assert (again.exit_code, again.unchanged) == (0, 6)  # all but the two status files + bundle


def test_xz_fallback_and_empty_lists_ship_everything(s3: str, log_dir: Path) -> None:
    bucket = new_bucket(s3)
    config = S3Config(
        bucket=bucket, endpoint_url=s3, prefix="runs", exclude=(), archive=("**/*.jsonl",)
    )
    result = upload_results(config, log_dir=log_dir, job_id="9", environ=ENV, now=NOW, zstd=None)
    assert (result.exit_code, result.bundle) == (0, "bundle.tar.xz")
    shipped = keys(s3, bucket)
    assert "runs/2026-03-04/9/perf_dashboard.json" in shipped
    assert "runs/2026-03-04/9/artifacts/run1/profile_export.jsonl" not in shipped
    body = client(s3).get_object(Bucket=bucket, Key="runs/2026-03-04/9/bundle.tar.xz")["Body"]
    with tarfile.open(fileobj=io.BytesIO(body.read()), mode="r:xz") as tar:
        assert len(tar.getnames()) == 2
    nothing = S3Config(bucket=bucket, endpoint_url=s3, prefix="all", exclude=(), archive=())
    result = upload_results(nothing, log_dir=log_dir, job_id="9", environ=ENV, now=NOW)
    assert result.bundle is None
    assert len([k for k in keys(s3, bucket) if k.startswith("all/")]) == 14


def test_config_keys_win_over_the_environment(s3: str, log_dir: Path) -> None:
    bucket = new_bucket(s3)
    config = S3Config(
        bucket=bucket, endpoint_url=s3, access_key_id=KEY_ID, secret_access_key="from-config"
    )
    result = upload_results(config, log_dir=log_dir, job_id="1", environ={}, now=NOW)
    assert result.exit_code == 0


def test_missing_credentials_fail_with_exit_11(log_dir: Path) -> None:
    logs = Logs()
    config = S3Config(bucket="b", endpoint_url=closed_port_url())
    result = upload_results(config, log_dir=log_dir, job_id="1", environ={}, now=NOW, log=logs)
    assert result.exit_code == 11
    assert result.error == (
        "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the shell that "
        "submits the job (reporting.s3.access_key_id would leak into the lockfile)"
    )
    assert len(logs.lines) == 1


def test_server_down_gives_exit_11_quickly_and_once(log_dir: Path) -> None:
    logs = Logs()
    config = S3Config(bucket="b", endpoint_url=closed_port_url())
    started = time.monotonic()
    result = upload_results(
        config, log_dir=log_dir, job_id="1", environ=ENV, now=NOW, log=logs, connect_timeout=0.5
    )
    elapsed = time.monotonic() - started
    assert result.exit_code == 11
    assert result.error is not None and result.error.startswith("EndpointConnectionError: ")
    assert elapsed < 30.0  # hang guard: 60 x the 0.5 s connect timeout (2 attempts, no long retry)
    warnings = [m for level, m in logs.lines if level >= 30]
    assert warnings == [
        f"S3 upload to {result.url} failed: {result.error}; the local logs are kept"
    ]
    status = json.loads((log_dir / "postprocess-status.json").read_text())
    assert (status["exit_code"], status["error"]) == (11, result.error)


def test_hung_server_is_cut_at_the_upload_timeout(log_dir: Path) -> None:
    with silent_server() as hung:
        config = S3Config(bucket="b", endpoint_url=hung)
        started = time.monotonic()
        result = upload_results(
            config, log_dir=log_dir, job_id="1", environ=ENV, now=NOW, timeout=1.0, read_timeout=30
        )
        elapsed = time.monotonic() - started
    # the message comes only from the bound cutting the upload (run_bounded); the guard is 20 x
    # the 1 s upload timeout and under the 30 s read timeout an uncut upload would wait for
    assert (result.exit_code, result.error) == (11, "timed out after 1s")
    assert elapsed < 20.0  # hang guard: 20 x the 1 s timeout, below the 30 s read timeout


def test_secrets_are_never_written(s3: str, log_dir: Path, tmp_path: Path) -> None:
    bucket = new_bucket(s3)
    upload_results(
        S3Config(bucket=bucket, endpoint_url=s3),
        log_dir=log_dir,
        job_id="4242",
        environ=ENV,
        now=NOW,
    )
    upload_results(
        S3Config(bucket="b", endpoint_url=closed_port_url()),
        log_dir=log_dir,
        job_id="4242",
        environ=ENV,
        now=NOW,
        connect_timeout=0.2,
    )
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_job_files_are_staged_into_the_log_dir(tmp_path: Path) -> None:
    job_dir = tmp_path / "4242"
    (job_dir / "logs").mkdir(parents=True)
    for name in ("config.yaml", "config_a.yaml", "sbatch_script.sh", "4242.json", "other.txt"):
        (job_dir / name).write_text(name)
    assert stage_job_files(job_dir, job_dir / "logs", "4242") == (
        "config.yaml",
        "config_a.yaml",
        "sbatch_script.sh",
        "4242.json",
    )
    assert (job_dir / "logs" / "config_a.yaml").read_text() == "config_a.yaml"
