"""Uploaded log and capture bytes on disk, idempotent by offset
(docs/telemetry-and-bench.md#log-streaming).

Layout: ``<root>/<job_id>/logs/<relative path>`` and ``<root>/<job_id>/captures/out-N.parquet``;
the root sits next to the database (``status.db`` -> ``status.db-uploads/``). The bytes stored
for a file are the truth about how much of it arrived: a chunk at exactly that size is appended;
a chunk that starts inside what is stored is acknowledged without writing anything again (only
a part reaching past the end is appended); a chunk that starts past the end would leave a hole
and is refused with 409 naming the offset to resend from.
"""

from __future__ import annotations

import errno
import shutil
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from srt_cli.collector.errors import ApiError

__all__ = ["UPLOAD_KINDS", "ChunkResult", "UploadStore", "uploads_root"]

UploadKind = Literal["logs", "captures"]
UPLOAD_KINDS: Final = ("logs", "captures")


def uploads_root(db_path: Path) -> Path:
    """The folder next to the database that holds uploaded bytes."""
    return db_path.with_name(f"{db_path.name}-uploads")


@dataclass(frozen=True, kw_only=True)
class ChunkResult:
    #: whether any new byte was written
    stored: bool
    #: bytes stored for the file after this chunk
    size: int


class UploadStore:
    """Appends chunks to per-job files; one lock serialises every write."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()

    def path(self, job_id: str, kind: UploadKind, file: str) -> Path:
        """Where ``file`` of ``job_id`` is kept (``file`` and ``job_id`` are validated names)."""
        return self.root / job_id / kind / file

    def write_chunk(
        self, job_id: str, kind: UploadKind, file: str, offset: int, body: bytes
    ) -> ChunkResult:
        """Store ``body`` at ``offset`` of ``file``; :class:`ApiError` 409 on a gap or clash."""
        target = self.path(job_id, kind, file)
        with self._lock:
            try:
                if target.is_dir():
                    raise IsADirectoryError(str(target))
                size = self.size(job_id, kind, file)
                if offset > size:
                    raise ApiError(
                        409,
                        f"{kind} file {file!r} of job {job_id}: offset {offset} is past the "
                        f"{size} bytes stored; resend from offset {size}",
                    )
                tail = body[size - offset :]
                if offset < size and not tail:
                    return ChunkResult(stored=False, size=size)
                target.parent.mkdir(parents=True, exist_ok=True)
                with target.open("ab") as handle:
                    handle.write(tail)
                return ChunkResult(stored=True, size=size + len(tail))
            except (NotADirectoryError, IsADirectoryError, FileExistsError) as exc:
                raise ApiError(
                    409,
                    f"{kind} file {file!r} of job {job_id} clashes with a stored file or folder "
                    "of the same name",
                ) from exc
            except OSError as exc:
                if exc.errno != errno.ENAMETOOLONG:
                    raise  # a broken or full disk: the server's fault, answered 500
                # protocol.py bounds names; a root deep in the file system can still overflow.
                raise ApiError(
                    422,
                    f"{kind} file {file[:200]!r} of job {job_id} makes a path too long for the "
                    "collector's disk; use a shorter name",
                ) from exc

    def read_tail(self, job_id: str, kind: UploadKind, file: str, limit: int) -> bytes | None:
        """The last ``limit`` bytes stored for ``file`` (None when nothing arrived)."""
        target = self.path(job_id, kind, file)
        try:
            with target.open("rb") as handle:
                size = handle.seek(0, 2)
                handle.seek(max(0, size - limit))
                return handle.read()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None

    def size(self, job_id: str, kind: UploadKind, file: str) -> int:
        """Bytes stored for ``file`` (0 when nothing arrived)."""
        target = self.path(job_id, kind, file)
        try:
            info = target.stat()
        except (FileNotFoundError, NotADirectoryError):
            return 0
        return info.st_size if stat.S_ISREG(info.st_mode) else 0

    def delete_job(self, job_id: str) -> None:
        """Remove every stored byte of ``job_id``."""
        folder = self.root / job_id
        with self._lock:
            if folder.is_dir():
                shutil.rmtree(folder)
