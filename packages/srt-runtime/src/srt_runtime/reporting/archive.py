"""``bundle.tar.zst``: the files matched by ``reporting.s3.archive``, packed into one archive
(docs/telemetry-and-bench.md#s3-upload).

Compression: the Debian ``zstd`` command (level 3, all cores) reading a tar stream on stdin, so
the runtime needs no compiled Python dependency; without ``zstd`` on PATH the bundle falls back
to ``bundle.tar.xz`` written with the standard library (the reference falls back the same way).
Members are sorted and named relative to the log directory.
"""

from __future__ import annotations

import fnmatch
import subprocess
import tarfile
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from srt_runtime.reporting.errors import ReportingConfigError, ReportingError

__all__ = [
    "ArchiveError",
    "check_patterns",
    "find_archive_members",
    "is_excluded",
    "write_bundle",
]

ZSTD_LEVEL = 3


class ArchiveError(ReportingError):
    """The bundle could not be written (the message names the file and the cause)."""


def check_patterns(field: str, patterns: Iterable[str]) -> tuple[str, ...]:
    """The patterns, unchanged, or :class:`ReportingConfigError` for one that leaves the log dir."""
    checked = tuple(patterns)
    for pattern in checked:
        parts = PurePosixPath(pattern).parts
        if not pattern or pattern.startswith(("/", "~")) or ".." in parts:
            raise ReportingConfigError(
                f"$.reporting.s3.{field}: {pattern!r} is not a pattern relative to the log "
                "directory; use a relative glob such as 'artifacts/**/profile_export.jsonl'"
            )
    return checked


def is_excluded(relpath: str, patterns: Iterable[str]) -> bool:
    """Whether ``relpath`` matches one ``aws s3 sync --exclude`` pattern (``*`` spans ``/``)."""
    return any(fnmatch.fnmatchcase(relpath, pattern) for pattern in patterns)


def find_archive_members(log_dir: Path, patterns: Iterable[str]) -> tuple[str, ...]:
    """Regular files under ``log_dir`` matched by the Python globs ``patterns`` (``**`` allowed),
    as sorted POSIX paths relative to ``log_dir``."""
    found: set[str] = set()
    for pattern in check_patterns("archive", patterns):
        for path in log_dir.glob(pattern):
            if path.is_file() and not path.is_symlink():
                found.add(path.relative_to(log_dir).as_posix())
    return tuple(sorted(found))


def _add_members(tar: tarfile.TarFile, log_dir: Path, members: Iterable[str]) -> None:
    for rel in members:
        tar.add(log_dir / rel, arcname=rel, recursive=False)


def write_bundle(
    log_dir: Path, members: tuple[str, ...], dest_dir: Path, *, zstd: str | None
) -> Path | None:
    """Pack ``members`` into ``dest_dir/bundle.tar.zst`` (or ``.tar.xz`` when ``zstd`` is None).

    ``dest_dir`` must be outside ``log_dir`` so the bundle is not synced twice. Returns None
    when there is nothing to pack.
    """
    if not members:
        return None
    dest_dir.mkdir(parents=True, exist_ok=True)
    try:
        if zstd is None:
            bundle = dest_dir / "bundle.tar.xz"
            with tarfile.open(bundle, "w:xz") as tar:
                _add_members(tar, log_dir, members)
            return bundle
        bundle = dest_dir / "bundle.tar.zst"
        argv = [zstd, f"-{ZSTD_LEVEL}", "-T0", "-q", "-f", "-o", str(bundle)]
        with subprocess.Popen(argv, stdin=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
            assert proc.stdin is not None and proc.stderr is not None
            try:
                with tarfile.open(fileobj=proc.stdin, mode="w|") as tar:
                    _add_members(tar, log_dir, members)
            finally:
                proc.stdin.close()
            err = proc.stderr.read().decode(errors="replace").strip()
            code = proc.wait()
    except OSError as exc:
        raise ArchiveError(f"cannot write the bundle in {dest_dir}: {exc}") from exc
    if code != 0:
        raise ArchiveError(f"{zstd} exited with code {code} writing {bundle}: {err or 'no output'}")
    return bundle
