"""Atomic JSON writes: a temp file in the same directory, fsync, rename."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

__all__ = ["write_json_atomic"]


def write_json_atomic(path: Path, data: object) -> None:
    """Write pretty JSON so that readers see the old or the new file, never half of one."""
    body = msgspec.json.format(msgspec.json.encode(data), indent=2) + b"\n"
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with tmp.open("wb") as fh:
            fh.write(body)
            fh.flush()
            os.fsync(fh.fileno())
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
