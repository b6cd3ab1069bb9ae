"""Drive one phase: send prepared requests under a concurrency cap and an arrival process.

`rate = inf` starts `concurrency` workers that each send the next request as soon as their
previous one finished (everything arrives at once, bounded by the cap). A finite rate draws
exponential inter-arrival gaps (a Poisson process) from a seeded generator; an arriving request
waits for a free slot.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections.abc import Sequence
from typing import Protocol

import msgspec

from srt_bench.client import PreparedRequest
from srt_bench.records import RequestRecord

__all__ = ["PhaseRun", "Sender", "poisson_gaps", "run_phase"]


class Sender(Protocol):
    async def send(self, request: PreparedRequest, *, origin: float) -> RequestRecord: ...


class PhaseRun(msgspec.Struct, frozen=True, kw_only=True):
    records: tuple[RequestRecord, ...]
    start_unix: float
    end_unix: float
    #: Monotonic seconds from the window start to the last request's end.
    duration: float


def poisson_gaps(rate: float, n: int, seed: int) -> list[float]:
    """Inter-arrival gaps in seconds (all zero for an infinite rate)."""
    if math.isinf(rate):
        return [0.0] * n
    rng = random.Random(seed)
    return [rng.expovariate(rate) for _ in range(n)]


async def run_phase(
    sender: Sender,
    requests: Sequence[PreparedRequest],
    *,
    concurrency: int,
    rate: float,
    seed: int,
) -> PhaseRun:
    """Send every request; records come back in request order."""
    results: list[RequestRecord | None] = [None] * len(requests)
    start_unix = time.time()
    origin = time.perf_counter()
    if math.isinf(rate):
        cursor = iter(range(len(requests)))

        async def worker() -> None:
            for i in cursor:
                results[i] = await sender.send(requests[i], origin=origin)

        await asyncio.gather(*(worker() for _ in range(min(concurrency, len(requests)))))
    else:
        slots = asyncio.Semaphore(concurrency)

        async def one(i: int) -> None:
            try:
                results[i] = await sender.send(requests[i], origin=origin)
            finally:
                slots.release()

        tasks: list[asyncio.Task[None]] = []
        next_at = origin
        for i, gap in enumerate(poisson_gaps(rate, len(requests), seed)):
            next_at += gap
            delay = next_at - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            await slots.acquire()
            tasks.append(asyncio.create_task(one(i)))
        await asyncio.gather(*tasks)
    duration = time.perf_counter() - origin
    end_unix = start_unix + duration
    records = tuple(r for r in results if r is not None)
    assert len(records) == len(requests)
    return PhaseRun(records=records, start_unix=start_unix, end_unix=end_unix, duration=duration)
