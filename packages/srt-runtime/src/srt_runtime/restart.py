"""The restart policy state machine and its record, ``logs/worker_restarts.json``.

:func:`decide` and :func:`backoff_for` are pure; :class:`RestartBook` accumulates the endpoints
and decisions of one job and renders the JSON document (docs/planner.md#failure-and-restart).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import msgspec

from srt_planner.plan import RestartSpec
from srt_runtime.files import write_atomic

__all__ = [
    "Decision",
    "EndpointRecord",
    "Outcome",
    "RestartBook",
    "RestartEvent",
    "RestartsDocument",
    "backoff_for",
    "decide",
]

Decision = Literal["release", "exhausted", "restart"]
Outcome = Literal["scheduled", "relaunched", "exhausted", "launch_failed"]


def backoff_for(spec: RestartSpec, restarts_done: int) -> float:
    """Delay before relaunch number ``restarts_done + 1``: doubling from the base, capped."""
    return float(min(spec.backoff_seconds * (2.0**restarts_done), spec.max_backoff_seconds))


def decide(spec: RestartSpec, restarts_done: int, exit_code: int) -> Decision:
    """What to do when a step of a restartable endpoint ended with ``exit_code``.

    ``release`` hands the exit back to the normal rules (critical decides); ``exhausted`` too,
    after recording that the budget is spent.
    """
    if spec.policy == "never" or (spec.policy == "on-failure" and exit_code == 0):
        return "release"
    if restarts_done >= spec.max_restarts:
        return "exhausted"
    return "restart"


class EndpointRecord(msgspec.Struct, kw_only=True):
    policy: str
    restarts: int = 0
    max_restarts: int
    exhausted: bool = False


class RestartEvent(msgspec.Struct, kw_only=True):
    worker: str
    mode: str
    index: int
    node: str
    attempt: int
    exit_code: int
    exited_at: str
    outcome: Outcome
    backoff_seconds: float | None = None
    relaunched_at: str | None = None
    ready_at: str | None = None
    ready_seconds: float | None = None
    crash_log: str | None = None
    engine: str | None = None
    reason: str | None = None

    @property
    def unit(self) -> str:
        """The restart unit (``decode_0``, or ``decode_0_e1`` for a vLLM shadow engine)."""
        base = f"{self.mode}_{self.index}"
        return f"{base}_e{self.engine}" if self.engine else base


class RestartsDocument(msgspec.Struct, kw_only=True):
    total_restarts: int = 0
    endpoints: dict[str, EndpointRecord] = {}
    events: list[RestartEvent] = []


class RestartBook:
    """The job's restart record; every change is written to ``path`` atomically."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.doc = RestartsDocument()

    def track(self, endpoint: str, spec: RestartSpec) -> None:
        if endpoint not in self.doc.endpoints:
            self.doc.endpoints[endpoint] = EndpointRecord(
                policy=spec.policy, max_restarts=spec.max_restarts
            )
            self.write()

    def add(self, event: RestartEvent) -> RestartEvent:
        self.doc.events.append(event)
        record = self.doc.endpoints[event.unit]
        if event.outcome == "exhausted":
            record.exhausted = True
        self.write()
        return event

    def relaunched(self, event: RestartEvent, at: str) -> None:
        event.outcome = "relaunched"
        event.relaunched_at = at
        self.doc.endpoints[event.unit].restarts += 1
        self.doc.total_restarts += 1
        self.write()

    def summary(self) -> str:
        """``Worker restarts: N (decode_0 x1, ...)``."""
        parts = [f"{k} x{r.restarts}" for k, r in sorted(self.doc.endpoints.items()) if r.restarts]
        detail = f" ({', '.join(parts)})" if parts else ""
        return f"Worker restarts: {self.doc.total_restarts}{detail}"

    def to_builtins(self) -> object:
        return msgspec.to_builtins(self.doc)

    def write(self) -> None:
        write_atomic(self.path, msgspec.json.format(msgspec.json.encode(self.doc)) + b"\n")
