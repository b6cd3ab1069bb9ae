"""The benchmark's progress (and, with ``benchmark.stream_output``, its whole log) in the
supervisor's own output.

srt-bench prints one ``[srt-bench] ...`` line per phase (warmup, measured requests, the phase's
result); the supervisor relays those lines from the client's log, so ``srtctl apply`` and the
sweep log show which concurrency is running without opening another file. When the plan says
``stream_benchmark_output``, the same relay mirrors every other line too, marked
``[benchmark.out]`` so it is clear whose output it is (the reference copies ``benchmark.out`` to
the orchestrator's stdout); the log file itself is kept as it is. Each progress line is also
handed to ``on_progress`` (the run's event log: a ``benchmark_progress`` event that ``srtctl
status`` shows).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

__all__ = ["MIRROR_PREFIX", "PREFIX", "ProgressRelay"]

PREFIX = "[srt-bench] "
#: What a mirrored line of the benchmark's log is marked with in the supervisor's output.
MIRROR_PREFIX = "[benchmark.out] "
_CHUNK = 64 * 1024


class ProgressRelay:
    """Reads new bytes of one log and logs its complete ``PREFIX`` lines (partial lines wait);
    with ``mirror``, every other line as well, after ``MIRROR_PREFIX``."""

    def __init__(
        self,
        path: Path,
        log: logging.Logger,
        *,
        prefix: str = PREFIX,
        mirror: bool = False,
        on_progress: Callable[[str], None] | None = None,
    ) -> None:
        self._path = path
        self._log = log
        self._prefix = prefix
        self._mirror = mirror
        self._on_progress = on_progress
        self._offset = 0
        self._partial = b""

    def poll(self) -> None:
        """Relay the complete lines written since the last poll (everything there is now)."""
        try:
            with self._path.open("rb") as handle:
                handle.seek(self._offset)
                while data := handle.read(_CHUNK):
                    self._offset += len(data)
                    *lines, self._partial = (self._partial + data).split(b"\n")
                    for raw in lines:
                        self._relay(raw)
        except FileNotFoundError:
            return

    def flush(self) -> None:
        """After the process exited: relay what is left, including a last line without a newline."""
        self.poll()
        if self._partial:
            raw, self._partial = self._partial, b""
            self._relay(raw)

    def _relay(self, raw: bytes) -> None:
        line = raw.decode("utf-8", errors="replace").rstrip()
        if line.startswith(self._prefix):
            self._log.info("%s", line)
            if self._on_progress is not None:
                self._on_progress(line[len(self._prefix) :].strip())
        elif self._mirror:
            self._log.info("%s%s", MIRROR_PREFIX, line)
