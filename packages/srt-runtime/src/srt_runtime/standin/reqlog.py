"""``--log-requests FILE``: one JSON line per request (time, method, path, query, body)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import IO

import msgspec

__all__ = ["RequestLog"]


class RequestLog:
    """Appends to ``path``; each line is flushed as it is written, so a reader (a test, the
    profiler) sees a request as soon as the stand-in has it."""

    def __init__(self, path: Path) -> None:
        self._file: IO[bytes] = path.open("ab")

    def write(self, method: str, path: str, query: str, body: bytes) -> None:
        parsed: object
        try:
            parsed = msgspec.json.decode(body) if body else None
        except msgspec.DecodeError:
            parsed = body.decode("utf-8", "replace")
        entry: dict[str, object] = {"time": time.time(), "method": method, "path": path}
        if query:
            entry["query"] = query
        entry["body"] = parsed
        self._file.write(msgspec.json.encode(entry) + b"\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()
