"""The clock the supervisor waits with, behind a Protocol so tests can inject a fake one."""

from __future__ import annotations

import threading
import time
from typing import Protocol

__all__ = ["Clock", "SystemClock"]


class Clock(Protocol):
    """Time source and waiting primitive of the supervisor."""

    def monotonic(self) -> float:
        """Seconds on a monotonic clock (deadlines, backoff, latencies)."""
        ...

    def wall(self) -> float:
        """Seconds since the epoch (timestamps written to files)."""
        ...

    def wait(self, event: threading.Event, timeout: float) -> bool:
        """Block until ``event`` is set or ``timeout`` seconds passed; return whether it is set."""
        ...


class SystemClock:
    """The real clock."""

    def monotonic(self) -> float:
        return time.monotonic()

    def wall(self) -> float:
        return time.time()

    def wait(self, event: threading.Event, timeout: float) -> bool:
        return event.wait(max(timeout, 0.0))
