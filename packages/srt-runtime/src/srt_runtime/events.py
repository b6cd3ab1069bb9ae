"""Events the supervisor reacts to, and the one queue they arrive on.

Producers are threads (one per child blocked in ``wait``, the log tailer); the supervisor's main
thread is the only consumer, so every decision is taken in one place.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

import msgspec

from srt_runtime.clock import Clock
from srt_runtime.launch import Handle

__all__ = ["Event", "EventQueue", "FatalLine", "ProcessExited", "watch_exit"]


class ProcessExited(msgspec.Struct, frozen=True, kw_only=True):
    """A started process exited with ``code`` (negative: killed by signal -code)."""

    name: str
    code: int
    at: float


class FatalLine(msgspec.Struct, frozen=True, kw_only=True):
    """A still-running process printed a line matching one of its fatal patterns."""

    name: str
    line: str
    at: float


Event = ProcessExited | FatalLine


class EventQueue:
    """A thread-safe FIFO whose ``ready`` flag is set while it holds events."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: deque[Event] = deque()
        self.ready = threading.Event()

    def put(self, event: Event) -> None:
        with self._lock:
            self._items.append(event)
            self.ready.set()

    def drain(self) -> list[Event]:
        with self._lock:
            items = list(self._items)
            self._items.clear()
            self.ready.clear()
        return items


def watch_exit(
    name: str,
    handle: Handle,
    queue: EventQueue,
    clock: Clock,
    *,
    on_exit: Callable[[], None] | None = None,
) -> threading.Thread:
    """Start a daemon thread that blocks in ``handle.wait()`` and reports the exit at once.

    ``on_exit`` runs on that thread before the event is queued (it marks the process done).
    """

    def _wait() -> None:
        code = handle.wait()
        if on_exit is not None:
            on_exit()
        queue.put(ProcessExited(name=name, code=-1 if code is None else code, at=clock.monotonic()))

    thread = threading.Thread(target=_wait, name=f"srt-wait-{name}", daemon=True)
    thread.start()
    return thread
