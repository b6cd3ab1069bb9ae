"""The sa-bench client measuring itself while a window runs (docs/telemetry-and-bench.md#validity).

A client that is the bottleneck reports the client's limits as the server's: its timestamps are
late when its event loop is busy. `LoopMonitor` runs beside the phase: a task that asks to sleep
`interval` seconds and records how much later it woke (the loop's lag), and the process CPU time
(`time.process_time`, every thread of the client) against the wall time. `build_client_load` is
pure; the numbers go into the result JSON (`client_load`) and, through `srt-bench validity`, into
the rollup (`srt_schema.rollup.ClientLoad`), where `client_saturated` judges them.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Awaitable, Callable, Sequence

from srt_schema.rollup import ClientLoad

__all__ = ["PROBE_INTERVAL_SECONDS", "LoopMonitor", "build_client_load"]

#: How long the probe asks to sleep each time.
PROBE_INTERVAL_SECONDS = 0.010


def _rank(ordered: Sequence[float], p: float) -> float:
    """Nearest-rank percentile of an ascending, non-empty sequence."""
    return ordered[max(1, math.ceil(p / 100.0 * len(ordered))) - 1]


def build_client_load(
    lags_seconds: Sequence[float], *, cpu_seconds: float, wall_seconds: float
) -> ClientLoad:
    """The window's lag percentiles (ms, nearest rank) and CPU share (pure)."""
    ordered = sorted(max(0.0, lag) for lag in lags_seconds)

    def ms(value: float) -> float:
        return round(value * 1000.0, 3)

    return ClientLoad(
        loop_lag_p50_ms=ms(_rank(ordered, 50.0)) if ordered else None,
        loop_lag_p99_ms=ms(_rank(ordered, 99.0)) if ordered else None,
        loop_lag_max_ms=ms(ordered[-1]) if ordered else None,
        lag_samples=len(ordered),
        cpu_seconds=round(cpu_seconds, 4),
        wall_seconds=round(wall_seconds, 4),
        cpu_share=round(cpu_seconds / wall_seconds, 4) if wall_seconds > 0 else None,
    )


class LoopMonitor:
    """`async with LoopMonitor() as monitor:` around a phase; then `monitor.load`.

    `clock` (wall, monotonic), `cpu_clock` (this process's CPU seconds) and `sleep` default to
    the real ones; a test drives them with a fake clock (docs/testing.md)."""

    def __init__(
        self,
        interval: float = PROBE_INTERVAL_SECONDS,
        *,
        clock: Callable[[], float] = time.perf_counter,
        cpu_clock: Callable[[], float] = time.process_time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.interval = interval
        self._clock, self._cpu_clock, self._sleep = clock, cpu_clock, sleep
        self.lags: list[float] = []
        self.load: ClientLoad | None = None
        self._task: asyncio.Task[None] | None = None
        self._cpu0 = 0.0
        self._wall0 = 0.0

    async def _probe(self) -> None:
        while True:
            before = self._clock()
            await self._sleep(self.interval)
            self.lags.append(self._clock() - before - self.interval)

    async def __aenter__(self) -> LoopMonitor:
        self._cpu0, self._wall0 = self._cpu_clock(), self._clock()
        self._task = asyncio.create_task(self._probe())
        return self

    async def __aexit__(self, *exc: object) -> None:
        cpu, wall = self._cpu_clock() - self._cpu0, self._clock() - self._wall0
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self.load = build_client_load(self.lags, cpu_seconds=cpu, wall_seconds=wall)
