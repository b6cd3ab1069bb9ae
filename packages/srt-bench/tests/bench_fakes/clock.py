"""A fake monotonic clock and `asyncio.sleep` for code that takes them as parameters
(docs/testing.md): time moves only when the code sleeps or the test moves it, so a test asserts
what happened and when, on this clock, whatever the machine's load."""

from __future__ import annotations

import asyncio


class FakeClock:
    """`clock()` reads the time; `await clock.sleep(s)` records `s`, yields once to the event loop
    (the tasks that are ready run at the current time, as they would when a real sleep starts),
    then moves the time by `s`."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        await asyncio.sleep(0)
        self.now += max(0.0, seconds)
