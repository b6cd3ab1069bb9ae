"""Drive a workload phase: requests on a fixed schedule, or conversations with think times.

Both keep `loadgen`'s contract: records come back in request order, the window starts just before
the first request and ends when the last one finishes. A request due while `concurrency` are in
flight waits for a slot; how late each one started is returned (`start_lag`).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable, Sequence

import msgspec

from srt_bench.client import Api, PreparedRequest
from srt_bench.loadgen import PhaseRun, Sender, poisson_gaps
from srt_bench.records import RequestRecord
from srt_bench.workloads.multi_turn import Conversation, History
from srt_bench.workloads.text import PieceMaker

__all__ = ["ConversationRun", "ScheduledRun", "Sleep", "run_conversations", "run_scheduled"]

#: `asyncio.sleep`'s shape: tests hand in a fake one with a fake clock (docs/testing.md).
Sleep = Callable[[float], Awaitable[None]]


class ScheduledRun(msgspec.Struct, frozen=True, kw_only=True):
    phase: PhaseRun
    #: Seconds each request started after its due time, in request order.
    start_lag: tuple[float, ...]


class ConversationRun(msgspec.Struct, frozen=True, kw_only=True):
    phase: PhaseRun
    #: Prompt token ids of every request, in request order (conversation by conversation; empty
    #: for a turn never sent).
    prompt_ids: tuple[tuple[int, ...], ...]


async def run_scheduled(
    sender: Sender,
    requests: Sequence[PreparedRequest],
    offsets: Sequence[float],
    *,
    concurrency: int,
    clock: Callable[[], float] = time.perf_counter,
    sleep: Sleep = asyncio.sleep,
) -> ScheduledRun:
    """Start request i at `offsets[i]` seconds after the window start (or when a slot frees).

    `clock` and `sleep` are the monotonic clock and the wait (a test's fake clock drives both)."""
    results: list[RequestRecord | None] = [None] * len(requests)
    lags = [0.0] * len(requests)
    slots = asyncio.Semaphore(concurrency)
    start_unix = time.time()
    origin = clock()

    async def one(i: int) -> None:
        try:
            results[i] = await sender.send(requests[i], origin=origin)
        finally:
            slots.release()

    tasks: list[asyncio.Task[None]] = []
    for i, due in enumerate(offsets):
        delay = origin + due - clock()
        if delay > 0:
            await sleep(delay)
        await slots.acquire()
        lags[i] = max(0.0, clock() - origin - due)
        tasks.append(asyncio.create_task(one(i)))
    await asyncio.gather(*tasks)
    duration = clock() - origin
    records = tuple(r for r in results if r is not None)
    assert len(records) == len(requests)
    phase = PhaseRun(
        records=records, start_unix=start_unix, end_unix=start_unix + duration, duration=duration
    )
    return ScheduledRun(phase=phase, start_lag=tuple(lags))


def _unsent(failed: int) -> RequestRecord:
    return RequestRecord(
        success=False, error=f"not sent: turn {failed} of this conversation failed", prompt_tokens=0
    )


async def run_conversations(
    sender: Sender,
    conversations: Sequence[Conversation],
    maker: PieceMaker,
    *,
    api: Api,
    model: str,
    concurrency: int,
    rate: float,
    seed: int,
    sleep: Sleep = asyncio.sleep,
) -> ConversationRun:
    """Run every conversation, at most `concurrency` at once; a finite `rate` starts them as a
    Poisson process. A failed turn ends its conversation (its later turns count as failed).
    `sleep` waits the think times (a test hands in a fake one that records them)."""
    results: list[list[RequestRecord]] = [[] for _ in conversations]
    ids: list[list[tuple[int, ...]]] = [[] for _ in conversations]
    start_unix = time.time()
    origin = time.perf_counter()

    async def talk(i: int) -> None:
        conv = conversations[i]
        history = History(conv, maker, api=api, model=model)
        for turn in range(len(conv.user_texts)):
            request = history.request(turn)
            ids[i].append(history.prompt_ids())
            record = await sender.send(request, origin=origin)
            results[i].append(record)
            if not record.success:
                for _ in range(turn + 1, len(conv.user_texts)):
                    results[i].append(_unsent(turn))
                    ids[i].append(())
                return
            history.answer(record.text)
            if turn < len(conv.think_s) and conv.think_s[turn] > 0:
                await sleep(conv.think_s[turn])

    if math.isinf(rate):
        cursor = iter(range(len(conversations)))

        async def worker() -> None:
            for i in cursor:
                await talk(i)

        await asyncio.gather(*(worker() for _ in range(min(concurrency, len(conversations)))))
    else:
        slots = asyncio.Semaphore(concurrency)

        async def one(i: int) -> None:
            try:
                await talk(i)
            finally:
                slots.release()

        tasks: list[asyncio.Task[None]] = []
        next_at = origin
        for i, gap in enumerate(poisson_gaps(rate, len(conversations), seed)):
            next_at += gap
            delay = next_at - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            await slots.acquire()
            tasks.append(asyncio.create_task(one(i)))
        await asyncio.gather(*tasks)
    duration = time.perf_counter() - origin
    phase = PhaseRun(
        records=tuple(r for per in results for r in per),
        start_unix=start_unix,
        end_unix=start_unix + duration,
        duration=duration,
    )
    return ConversationRun(phase=phase, prompt_ids=tuple(i for per in ids for i in per))
