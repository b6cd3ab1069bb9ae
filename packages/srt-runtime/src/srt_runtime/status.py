"""Lifecycle status: ``status.json`` (the latest state, replaced atomically) and
``status_events.jsonl`` (one line per change), both in the job directory."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Protocol

import msgspec

from srt_runtime.clock import Clock
from srt_runtime.files import iso_utc, write_atomic

__all__ = ["FileStatusSink", "Stage", "StatusEvent", "StatusSink", "StatusValue"]

Stage = Literal[
    "starting",
    "host_setup",
    "head_infrastructure",
    "before_workers",
    "workers",
    "frontend",
    "health",
    "after_frontend",
    "telemetry",
    "benchmark",
    "post_eval",
    "serving",
    "cleanup",
]
#: ``cancelled``: the run was stopped by SIGTERM/SIGINT (scancel, time limit, Ctrl-C); exit 1.
StatusValue = Literal["running", "completed", "failed", "cancelled"]


class StatusEvent(msgspec.Struct, frozen=True, kw_only=True):
    """One lifecycle change."""

    job_id: str
    status: StatusValue
    stage: Stage
    message: str = ""
    exit_code: int | None = None
    at: str
    #: The supervisor's pid (``python -m srt_runtime`` records it), so ``srtctl status`` can tell
    #: a run whose supervisor died (``running`` for ever) from one that is running.
    pid: int | None = None


class StatusSink(Protocol):
    """Where lifecycle changes go."""

    def emit(
        self, stage: Stage, status: StatusValue, message: str = "", exit_code: int | None = None
    ) -> None: ...


class FileStatusSink:
    """Writes ``status.json`` and appends to ``status_events.jsonl`` under ``job_dir``; ``pid``
    (the supervisor's) goes into every event."""

    def __init__(self, job_dir: Path, job_id: str, clock: Clock, *, pid: int | None = None) -> None:
        self._job_dir = job_dir
        self._job_id = job_id
        self._clock = clock
        self._pid = pid
        self.events: list[StatusEvent] = []

    def emit(
        self, stage: Stage, status: StatusValue, message: str = "", exit_code: int | None = None
    ) -> None:
        event = StatusEvent(
            job_id=self._job_id,
            status=status,
            stage=stage,
            message=message,
            exit_code=exit_code,
            at=iso_utc(self._clock.wall()),
            pid=self._pid,
        )
        self.events.append(event)
        line = msgspec.json.encode(event) + b"\n"
        self._job_dir.mkdir(parents=True, exist_ok=True)
        with (self._job_dir / "status_events.jsonl").open("ab") as handle:
            handle.write(line)
        write_atomic(self._job_dir / "status.json", msgspec.json.format(msgspec.json.encode(event)))
