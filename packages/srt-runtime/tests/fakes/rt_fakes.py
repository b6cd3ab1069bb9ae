"""Test doubles for srt_runtime (a fake clock, a recording command runner, sinks)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from srt_runtime.status import Stage, StatusSink, StatusValue


class FakeClock:
    """Virtual time: a wait that times out moves the clock by its whole timeout at once.

    Real events still end a wait early (it really waits a couple of milliseconds each time), so
    real processes keep working while backoffs and deadlines pass without sleeping.
    """

    def __init__(self, start: float = 1000.0) -> None:
        self._now = start
        self._lock = threading.Lock()
        self.waited = 0.0

    def monotonic(self) -> float:
        with self._lock:
            return self._now

    def wall(self) -> float:
        return 1_700_000_000.0 + self.monotonic()

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += seconds

    def wait(self, event: threading.Event, timeout: float) -> bool:
        if event.wait(0.002):
            return True
        self.advance(max(timeout, 0.0))
        with self._lock:
            self.waited += max(timeout, 0.0)
        return event.is_set()


class RecordingRunner:
    """A CommandRunner that records argv and answers from a table keyed by argv[0]."""

    def __init__(self, answers: dict[str, tuple[int, str]]) -> None:
        self.answers = answers
        self.calls: list[tuple[str, ...]] = []

    def __call__(self, argv: Sequence[str]) -> tuple[int, str]:
        self.calls.append(tuple(argv))
        return self.answers.get(argv[0], (127, ""))


class HookSink:
    """A StatusSink that forwards to another and calls ``hook(stage, status)`` on every event."""

    def __init__(self, inner: StatusSink, hook: Callable[[Stage, StatusValue], None]) -> None:
        self.inner = inner
        self.hook = hook

    def emit(
        self, stage: Stage, status: StatusValue, message: str = "", exit_code: int | None = None
    ) -> None:
        self.inner.emit(stage, status, message, exit_code)
        self.hook(stage, status)
