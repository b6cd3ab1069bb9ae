"""The benchmark's progress in the supervisor's own output.

srt-bench prints one ``[srt-bench] ...`` line per phase (warmup, measured requests, the phase's
result); the supervisor relays those lines from the client's log, so ``srtctl apply`` and the
sweep log show which concurrency is running without opening another file.
"""

from __future__ import annotations

import logging
from pathlib import Path

__all__ = ["PREFIX", "ProgressRelay"]

PREFIX = "[srt-bench] "
_CHUNK = 64 * 1024


class ProgressRelay:
    """Reads new bytes of one log and logs its complete ``PREFIX`` lines (partial lines wait)."""

    def __init__(self, path: Path, log: logging.Logger, *, prefix: str = PREFIX) -> None:
        self._path = path
        self._log = log
        self._prefix = prefix
        self._offset = 0
        self._partial = b""

    def poll(self) -> None:
        try:
            with self._path.open("rb") as handle:
                handle.seek(self._offset)
                data = handle.read(_CHUNK)
        except FileNotFoundError:
            return
        if not data:
            return
        self._offset += len(data)
        *lines, self._partial = (self._partial + data).split(b"\n")
        for raw in lines:
            line = raw.decode("utf-8", errors="replace").rstrip()
            if line.startswith(self._prefix):
                self._log.info("%s", line)
