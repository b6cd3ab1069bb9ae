"""Upload of the log directory to S3-compatible storage after the run
(docs/telemetry-and-bench.md#s3-upload).

Destination ``s3://<bucket>/<prefix or "srtslurm">/<YYYY-MM-DD UTC>/<job_id>/``. The sync skips
the ``exclude`` patterns (defaults below; ``[]`` ships everything) and the files packed into
``bundle.tar.zst`` by the ``archive`` globs; the bundle is uploaded next to the loose files.
``postprocess-status.json`` (URL and pattern lists) is written into the log directory first so it
ships too, then rewritten with the outcome; ``postprocess.log`` records each step.

Credentials come from ``reporting.s3`` or ``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` (and
``AWS_SESSION_TOKEN``) in the environment handed in; they are passed straight to boto3 and never
written or logged. Any failure gives :data:`S3_FAILURE_EXIT_CODE` in the result (the job's own
exit code is not changed) and the whole upload is bounded by ``timeout`` (600 s by default).
"""

from __future__ import annotations

import datetime as dt
import logging
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import boto3
import botocore.config
import msgspec

from srt_runtime.reporting._common import LogFn, null_log, run_bounded
from srt_runtime.reporting.archive import (
    check_patterns,
    find_archive_members,
    is_excluded,
    write_bundle,
)
from srt_runtime.reporting.errors import ReportingConfigError
from srt_schema.recipe import S3Config
from srt_schema.timestamps import iso_seconds_z

__all__ = [
    "DEFAULT_ARCHIVE",
    "DEFAULT_EXCLUDE",
    "DEFAULT_PREFIX",
    "S3_FAILURE_EXIT_CODE",
    "S3Target",
    "UploadResult",
    "build_target",
    "effective_archive",
    "effective_exclude",
    "resolve_credentials",
    "stage_job_files",
    "upload_results",
]

#: Exit code of a failed upload (the reference's post-processing step exits 11).
S3_FAILURE_EXIT_CODE = 11
#: Wall-clock bound of one whole upload, seconds.
UPLOAD_TIMEOUT = 600.0
DEFAULT_PREFIX = "srtslurm"
DEFAULT_EXCLUDE: tuple[str, ...] = (
    "artifacts/*/server_metrics_export.jsonl",
    "artifacts/*/server_metrics_export.json",
    "artifacts/*/gpu_telemetry_export.jsonl",
    "artifacts/*/inputs.json",
    "sa-bench_*/*/server_metrics_export.jsonl",
    "sa-bench_*/*/server_metrics_export.json",
    "sa-bench_*/*/gpu_telemetry_export.jsonl",
    "sa-bench_*/*/inputs.json",
    "perf_dashboard_bundle/*",
    "perf_dashboard.json",
)
DEFAULT_ARCHIVE: tuple[str, ...] = (
    "artifacts/**/profile_export.jsonl",
    "sa-bench_*/**/profile_export.jsonl",
)
STATUS_FILE = "postprocess-status.json"
LOG_FILE = "postprocess.log"


class S3Target(msgspec.Struct, frozen=True, kw_only=True):
    bucket: str
    #: Key prefix, ending in ``/``.
    key_prefix: str
    #: ``s3://<bucket>/<key_prefix>``.
    url: str


class UploadResult(msgspec.Struct, frozen=True, kw_only=True):
    """The outcome of :func:`upload_results`; ``exit_code`` is 0 or :data:`S3_FAILURE_EXIT_CODE`."""

    url: str
    exit_code: int
    uploaded: int = 0
    unchanged: int = 0
    bundle: str | None = None
    #: What failed and why (None on success).
    error: str | None = None
    #: Every file the destination holds after a successful upload (uploaded or unchanged, the
    #: bundle included), relative to ``url``, sorted; the status report links them.
    files: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


class _Credentials(msgspec.Struct, frozen=True):
    access_key_id: str
    secret_access_key: str
    session_token: str | None

    def __repr__(self) -> str:  # never show the secret, even in a traceback
        return f"_Credentials(access_key_id={self.access_key_id[:4]}..., secret=***)"


def build_target(config: S3Config, job_id: str, day: dt.date) -> S3Target:
    """Where this job's files go (pure; ``day`` is the UTC date at upload time)."""
    if not config.bucket.strip():
        raise ReportingConfigError(
            "$.reporting.s3.bucket: the bucket name is empty; name an existing bucket"
        )
    prefix = (config.prefix or DEFAULT_PREFIX).strip("/")
    key_prefix = f"{prefix}/{day.isoformat()}/{job_id}/" if prefix else f"{day}/{job_id}/"
    return S3Target(
        bucket=config.bucket, key_prefix=key_prefix, url=f"s3://{config.bucket}/{key_prefix}"
    )


def effective_exclude(config: S3Config) -> tuple[str, ...]:
    """``exclude`` as configured, or the defaults when unset (``[]`` excludes nothing)."""
    return DEFAULT_EXCLUDE if config.exclude is None else config.exclude


def effective_archive(config: S3Config) -> tuple[str, ...]:
    """``archive`` as configured, or the defaults when unset (``[]`` disables the bundle)."""
    return DEFAULT_ARCHIVE if config.archive is None else check_patterns("archive", config.archive)


def resolve_credentials(config: S3Config, environ: Mapping[str, str]) -> _Credentials | None:
    """Keys from the config, else ``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY``; None if
    either is missing (boto3's own search of files and instance metadata is never used)."""
    key = config.access_key_id or environ.get("AWS_ACCESS_KEY_ID") or None
    secret = config.secret_access_key or environ.get("AWS_SECRET_ACCESS_KEY") or None
    if key is None or secret is None:
        return None
    return _Credentials(key, secret, environ.get("AWS_SESSION_TOKEN") or None)


def stage_job_files(job_dir: Path, log_dir: Path, job_id: str) -> tuple[str, ...]:
    """Copy ``config*.yaml``, ``sbatch_script.sh`` and ``<job_id>.json`` from the job directory
    into the log directory so they ship with the logs; returns the names copied."""
    copied: list[str] = []
    names = sorted({p.name for p in job_dir.glob("config*.yaml")})
    for name in (*names, "sbatch_script.sh", f"{job_id}.json"):
        source = job_dir / name
        if source.is_file():
            shutil.copy2(source, log_dir / name)
            copied.append(name)
    return tuple(copied)


def _sync_files(log_dir: Path, exclude: tuple[str, ...], archived: tuple[str, ...]) -> list[str]:
    skip = set(archived)
    files = []
    for path in sorted(log_dir.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        rel = path.relative_to(log_dir).as_posix()
        if rel not in skip and not is_excluded(rel, exclude):
            files.append(rel)
    return files


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


class _Step:
    """Appends timestamped lines to ``postprocess.log`` and mirrors them to the log callable."""

    def __init__(self, path: Path, log: LogFn) -> None:
        self._path = path
        self._log = log

    def __call__(self, level: int, message: str) -> None:
        stamp = iso_seconds_z(dt.datetime.now(dt.UTC))
        with self._path.open("a") as handle:
            handle.write(f"{stamp} {logging.getLevelName(level)} {message}\n")
        self._log(level, message)


def _write_status(log_dir: Path, doc: Mapping[str, Any]) -> None:
    (log_dir / STATUS_FILE).write_bytes(msgspec.json.format(msgspec.json.encode(doc)) + b"\n")


def upload_results(
    config: S3Config,
    *,
    log_dir: Path,
    job_id: str,
    environ: Mapping[str, str],
    now: dt.datetime,
    log: LogFn = null_log,
    timeout: float = UPLOAD_TIMEOUT,
    connect_timeout: float = 10.0,
    read_timeout: float = 60.0,
    zstd: str | None = None,
    client_factory: Callable[..., Any] | None = None,
) -> UploadResult:
    """Sync ``log_dir`` to the job's S3 destination; never raises for network or server errors.

    ``zstd`` is the compressor's path (``shutil.which("zstd")`` at the call site; None packs
    ``bundle.tar.xz``). ``client_factory`` defaults to ``boto3.session.Session(...).client``.
    """
    target = build_target(config, job_id, now.astimezone(dt.UTC).date())
    exclude = effective_exclude(config)
    archive = effective_archive(config)
    step = _Step(log_dir / LOG_FILE, log)
    status: dict[str, Any] = {
        "s3_url": target.url,
        "exclude": list(exclude),
        "archive": list(archive),
    }
    _write_status(log_dir, status)

    def _fail(error: str, **counts: Any) -> UploadResult:
        step(logging.WARNING, f"S3 upload to {target.url} failed: {error}; the local logs are kept")
        _write_status(log_dir, {**status, "exit_code": S3_FAILURE_EXIT_CODE, "error": error})
        return UploadResult(url=target.url, exit_code=S3_FAILURE_EXIT_CODE, error=error, **counts)

    credentials = resolve_credentials(config, environ)
    if credentials is None:
        return _fail(
            "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the shell "
            "that submits the job (reporting.s3.access_key_id would leak into the lockfile)"
        )
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="srt-s3-") as scratch:
        finished, result, error = run_bounded(
            lambda: _upload(
                config,
                target,
                credentials,
                log_dir=log_dir,
                exclude=exclude,
                archive=archive,
                scratch=Path(scratch),
                step=step,
                connect_timeout=connect_timeout,
                read_timeout=read_timeout,
                zstd=zstd,
                client_factory=client_factory,
            ),
            timeout,
            name=f"srt-s3-{job_id}",
        )
    if not finished:
        return _fail(f"timed out after {timeout:g}s")
    if error is not None:
        return _fail(_describe(error))
    assert result is not None
    uploaded, unchanged, bundle, files = result
    step(
        logging.INFO,
        f"uploaded {uploaded} object(s) to {target.url} ({unchanged} unchanged) in "
        f"{time.monotonic() - started:.1f}s",
    )
    _write_status(log_dir, {**status, "exit_code": 0, "objects": uploaded + unchanged})
    return UploadResult(
        url=target.url,
        exit_code=0,
        uploaded=uploaded,
        unchanged=unchanged,
        bundle=bundle,
        files=files,
    )


def _upload(
    config: S3Config,
    target: S3Target,
    credentials: _Credentials,
    *,
    log_dir: Path,
    exclude: tuple[str, ...],
    archive: tuple[str, ...],
    scratch: Path,
    step: Callable[[int, str], None],
    connect_timeout: float,
    read_timeout: float,
    zstd: str | None,
    client_factory: Callable[..., Any] | None,
) -> tuple[int, int, str | None, tuple[str, ...]]:
    members = find_archive_members(log_dir, archive)
    bundle = write_bundle(log_dir, members, scratch, zstd=zstd)
    if bundle is not None:
        step(logging.INFO, f"packed {len(members)} file(s) into {bundle.name}")
    files = _sync_files(log_dir, exclude, members)
    boto_config = botocore.config.Config(
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        retries={"total_max_attempts": 2, "mode": "standard"},
        s3={"addressing_style": "path"} if config.endpoint_url else None,
    )
    factory = (
        client_factory
        or boto3.session.Session(
            aws_access_key_id=credentials.access_key_id,
            aws_secret_access_key=credentials.secret_access_key,
            aws_session_token=credentials.session_token,
            region_name=config.region or "us-east-1",
        ).client
    )
    client = factory("s3", endpoint_url=config.endpoint_url, config=boto_config)
    remote: dict[str, int] = {}
    paginator = client.get_paginator("list_objects_v2")
    for page in paginator.paginate(Bucket=target.bucket, Prefix=target.key_prefix):
        for item in page.get("Contents", ()):
            remote[item["Key"]] = item["Size"]
    uploaded = unchanged = 0
    for rel in files:
        path = log_dir / rel
        key = target.key_prefix + rel
        if remote.get(key) == path.stat().st_size and rel not in (STATUS_FILE, LOG_FILE):
            unchanged += 1
            continue
        client.upload_file(str(path), target.bucket, key)
        uploaded += 1
    if bundle is not None:
        client.upload_file(str(bundle), target.bucket, target.key_prefix + bundle.name)
        uploaded += 1
    name = bundle.name if bundle is not None else None
    shipped = tuple(sorted((*files, name) if name is not None else files))
    return uploaded, unchanged, name, shipped
