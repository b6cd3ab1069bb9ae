"""What the supervisor knows about each launched process and each restartable endpoint."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from srt_planner.plan import ProcessSpec
from srt_runtime.launch import Handle
from srt_runtime.restart import RestartEvent

__all__ = ["Endpoint", "Proc", "is_oneshot"]


def is_oneshot(spec: ProcessSpec) -> bool:
    """Run-to-completion steps: their exit is the stage's business, not a failure event."""
    return spec.oneshot or spec.phase in ("host_setup", "benchmark", "post_eval")


@dataclass(eq=False)
class Proc:
    """One launched process (a relaunch is a new Proc named ``<name>_r<n>``)."""

    spec: ProcessSpec
    base: ProcessSpec
    handle: Handle
    log_path: Path
    seq: int
    done: threading.Event = field(default_factory=threading.Event)
    exit_code: int | None = None
    fatal_line: str | None = None
    #: The supervisor asked it to stop, so its exit is expected.
    stopping: bool = False

    @property
    def node(self) -> str:
        return self.spec.nodes[0]


@dataclass(eq=False)
class Endpoint:
    """The launches of one restart unit (``<role>_<index>``) and its restart state."""

    key: str
    specs: list[ProcessSpec]
    restarts: int = 0
    due: float | None = None
    pending: RestartEvent | None = None
    #: After a relaunch: the leader's probe is polled until ready or this deadline.
    ready_deadline: float | None = None
    next_probe: float = 0.0
    relaunched_at: float = 0.0
