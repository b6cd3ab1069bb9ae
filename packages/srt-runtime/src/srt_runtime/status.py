"""Lifecycle status: ``status.json`` (the latest state, replaced atomically) and
``status_events.jsonl`` (one typed event a line), both in the job directory.

``status_events.jsonl`` holds :data:`RunEvent` lines, a tagged union on the ``event`` field:
``status`` (a stage change, :class:`StatusEvent`, also the content of ``status.json``),
``process`` (a process started / became ready / exited / was relaunched), ``health`` (the health
gate passed) and ``benchmark_progress`` (one ``[srt-bench]`` line of the client). ``srtctl
status``, ``monitor`` and the status collector decode these structs; nobody reads log prose.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Literal, Protocol

import msgspec

from srt_planner.plan import ProcessKind
from srt_runtime.clock import Clock
from srt_runtime.files import write_atomic
from srt_schema.timestamps import iso_millis_offset

__all__ = [
    "BenchmarkProgress",
    "EventLog",
    "FileStatusSink",
    "HealthPassed",
    "ProcessEvent",
    "ProcessWhat",
    "RunEvent",
    "Stage",
    "StatusEvent",
    "StatusSink",
    "StatusValue",
    "decode_event_lines",
]

#: The tag field of every line of ``status_events.jsonl``.
EVENT_TAG = "event"
EVENTS_FILE = "status_events.jsonl"

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
#: ``cancelled``: the run was stopped by SIGTERM/SIGINT (scancel, Slurm's time limit, Ctrl-C);
#: ``timeout``: a local run reached its plan's time limit and stopped itself; both exit 1.
StatusValue = Literal["running", "completed", "failed", "cancelled", "timeout"]


class StatusEvent(msgspec.Struct, frozen=True, kw_only=True, tag_field=EVENT_TAG, tag="status"):
    """One lifecycle change (a line without the ``event`` tag, written before the tag existed,
    decodes as this)."""

    job_id: str
    status: StatusValue
    stage: Stage
    message: str = ""
    exit_code: int | None = None
    at: str
    #: The supervisor's pid (``python -m srt_runtime`` records it), so ``srtctl status`` can tell
    #: a run whose supervisor died (``running`` for ever) from one that is running.
    pid: int | None = None


#: ``started``: launched (a relaunch has its own ``name``, ``<process>_r<n>``); ``ready``: its
#: readiness probe passed; ``exited``: the child exited (``exit_code``; negative: the signal);
#: ``restarted``: the restart policy relaunched it as ``name``.
ProcessWhat = Literal["started", "ready", "exited", "restarted"]


class ProcessEvent(msgspec.Struct, frozen=True, kw_only=True, tag_field=EVENT_TAG, tag="process"):
    """A process of the plan changed state."""

    job_id: str
    what: ProcessWhat
    #: The launch name (``<process>_r<n>`` for a relaunch).
    name: str
    #: The plan's process name (``JobPlan.processes[].name``).
    process: str
    kind: ProcessKind
    node: str
    exit_code: int | None = None
    at: str


class HealthPassed(msgspec.Struct, frozen=True, kw_only=True, tag_field=EVENT_TAG, tag="health"):
    """The health gate saw the deployment ready after ``seconds``."""

    job_id: str
    url: str
    seconds: float
    at: str


class BenchmarkProgress(
    msgspec.Struct, frozen=True, kw_only=True, tag_field=EVENT_TAG, tag="benchmark_progress"
):
    """One progress line of the benchmark client (``[srt-bench] ...``, without the prefix)."""

    job_id: str
    process: str
    line: str
    at: str


RunEvent = StatusEvent | ProcessEvent | HealthPassed | BenchmarkProgress

_DECODER = msgspec.json.Decoder(RunEvent)
_LEGACY = msgspec.json.Decoder(StatusEvent)


def decode_event_lines(data: bytes) -> list[RunEvent]:
    """The events of a ``status_events.jsonl``; a line that does not decode (being appended
    right now, or torn) is left out."""
    events: list[RunEvent] = []
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            events.append(_DECODER.decode(line))
        except (msgspec.DecodeError, msgspec.ValidationError):
            try:
                events.append(_LEGACY.decode(line))  # a line without the tag
            except (msgspec.DecodeError, msgspec.ValidationError):
                continue
    return events


class EventLog:
    """Appends :data:`RunEvent` lines to ``<job_dir>/status_events.jsonl`` (thread-safe)."""

    def __init__(self, job_dir: Path, job_id: str, clock: Clock) -> None:
        self.job_dir = job_dir
        self.job_id = job_id
        self._clock = clock
        self._lock = threading.Lock()

    def now(self) -> str:
        return iso_millis_offset(self._clock.wall())

    def append(self, event: RunEvent) -> None:
        line = msgspec.json.encode(event) + b"\n"
        with self._lock:
            self.job_dir.mkdir(parents=True, exist_ok=True)
            with (self.job_dir / EVENTS_FILE).open("ab") as handle:
                handle.write(line)

    def process(
        self,
        what: ProcessWhat,
        *,
        name: str,
        process: str,
        kind: ProcessKind,
        node: str,
        exit_code: int | None = None,
    ) -> None:
        self.append(
            ProcessEvent(
                job_id=self.job_id,
                what=what,
                name=name,
                process=process,
                kind=kind,
                node=node,
                exit_code=exit_code,
                at=self.now(),
            )
        )

    def health(self, url: str, seconds: float) -> None:
        self.append(
            HealthPassed(job_id=self.job_id, url=url, seconds=round(seconds, 3), at=self.now())
        )

    def progress(self, process: str, line: str) -> None:
        self.append(
            BenchmarkProgress(job_id=self.job_id, process=process, line=line, at=self.now())
        )


class StatusSink(Protocol):
    """Where lifecycle changes go."""

    def emit(
        self, stage: Stage, status: StatusValue, message: str = "", exit_code: int | None = None
    ) -> None: ...


class FileStatusSink:
    """Writes ``status.json`` and appends to ``status_events.jsonl`` under ``job_dir``; ``pid``
    (the supervisor's) goes into every event."""

    def __init__(
        self,
        job_dir: Path,
        job_id: str,
        clock: Clock,
        *,
        pid: int | None = None,
        log: EventLog | None = None,
    ) -> None:
        self._job_dir = job_dir
        self._job_id = job_id
        self._clock = clock
        self._pid = pid
        #: The one writer of ``status_events.jsonl`` (share it with the Supervisor).
        self.log = log or EventLog(job_dir, job_id, clock)
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
            at=iso_millis_offset(self._clock.wall()),
            pid=self._pid,
        )
        self.events.append(event)
        self.log.append(event)
        write_atomic(self._job_dir / "status.json", msgspec.json.format(msgspec.json.encode(event)))
