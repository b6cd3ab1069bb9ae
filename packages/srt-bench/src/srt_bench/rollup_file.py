"""Reading and rewriting `benchmark-rollup.json` in place, for the steps that add to it after the
benchmark (`srt-bench energy`, `profiles`, `validity`).

Each step decodes the file twice: as `Rollup` (so a malformed file is refused with its `$.path`)
and as a plain document (so the fields another step wrote, which `Rollup` may not know, are kept).
The rewrite checks that what it writes still decodes, and replaces the file atomically only when
the bytes change.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

from srt_bench.errors import BenchError
from srt_schema.rollup import Rollup, decode_rollup, encode_rollup

__all__ = ["read_file", "read_rollup", "write_atomic", "write_rollup"]


def read_file(path: Path, error: type[BenchError]) -> bytes | None:
    """The file's bytes; None when it does not exist; `error` naming it when it cannot be read."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise error(f"{path}: cannot be read: {exc.strerror or exc}") from exc


def read_rollup(path: Path, error: type[BenchError]) -> tuple[bytes, Rollup, dict[str, Any]] | None:
    """(bytes, `Rollup`, the whole document); None when there is no rollup yet."""
    data = read_file(path, error)
    if data is None:
        return None
    try:
        rollup = decode_rollup(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise error(f"{path}: not a benchmark rollup: {exc}") from exc
    document: dict[str, Any] = msgspec.json.decode(data)
    return data, rollup, document


def write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    tmp.replace(path)


def write_rollup(path: Path, document: dict[str, Any], original: bytes) -> bool:
    """Write `document` over the rollup read as `original`; True when the bytes changed."""
    out = encode_rollup(document)
    decode_rollup(out)  # what the readers decode; a failure here is a bug, not bad input
    if out == original:
        return False
    write_atomic(path, out)
    return True
