"""Fatal-marker scanning of growing log files.

:class:`LogScanner` reads only the bytes appended since the last call (in 64 KiB chunks, bounded
per call), matches whole lines only (a partial last line waits for its newline), replaces invalid
UTF-8, restarts at offset 0 when the file was truncated and ignores a missing file.
:class:`LogTailer` runs the scanners of every watched log on one thread, every ``interval``
seconds (default 0.1 s: a fatal line is seen within about that much time).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from pathlib import Path

__all__ = ["LogScanner", "LogTailer"]

_CHUNK = 64 * 1024
_MAX_CHUNKS_PER_SCAN = 16
#: A "line" longer than this without a newline is scanned as it is, so memory stays bounded.
_MAX_PARTIAL = 1024 * 1024


class LogScanner:
    """Incremental scanner of one log file for regular expressions."""

    def __init__(self, path: Path, patterns: tuple[str, ...]) -> None:
        self.path = path
        self._patterns = tuple(re.compile(p) for p in patterns)
        self._offset = 0
        self._partial = b""

    def scan(self) -> list[str]:
        """The complete new lines that match any pattern, in file order."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return []
        if size < self._offset:
            self._offset = 0
            self._partial = b""
        if size == self._offset:
            return []
        with self.path.open("rb") as handle:
            handle.seek(self._offset)
            data = handle.read(_CHUNK * _MAX_CHUNKS_PER_SCAN)
        self._offset += len(data)
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        if len(self._partial) > _MAX_PARTIAL:
            lines.append(self._partial)
            self._partial = b""
        found: list[str] = []
        for raw in lines:
            text = raw.decode("utf-8", errors="replace").rstrip("\r")
            if any(p.search(text) for p in self._patterns):
                found.append(text)
        return found


class LogTailer:
    """One thread scanning every watched log; calls ``on_match(key, line)`` for each match."""

    def __init__(self, on_match: Callable[[str, str], None], *, interval: float = 0.1) -> None:
        self._on_match = on_match
        self._interval = interval
        self._lock = threading.Lock()
        self._scanners: dict[str, LogScanner] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="srt-log-tailer", daemon=True)

    def watch(self, key: str, scanner: LogScanner) -> None:
        with self._lock:
            self._scanners[key] = scanner

    def unwatch(self, key: str) -> None:
        with self._lock:
            self._scanners.pop(key, None)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def scan_once(self) -> None:
        with self._lock:
            items = list(self._scanners.items())
        for key, scanner in items:
            for line in scanner.scan():
                self._on_match(key, line)

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            self.scan_once()
