"""Small file helpers shared by the writers (atomic replace, UTC timestamps)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

__all__ = ["iso_utc", "write_atomic"]


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so a reader sees the old or the new content, never a mix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def iso_utc(seconds: float) -> str:
    """Epoch seconds as an ISO 8601 UTC timestamp with milliseconds."""
    return dt.datetime.fromtimestamp(seconds, tz=dt.UTC).isoformat(timespec="milliseconds")
