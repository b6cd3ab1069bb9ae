"""The fixed-stream server's token schedule: reproducible per prompt, kept on the wire, and the
truth our client's TTFT and ITL are measured against (benchmarks/client_capacity.py)."""

from __future__ import annotations

import asyncio
import itertools
import json
import time

import httpx
import pytest

from srt_bench.client import PreparedRequest, StreamClient, build_request_body
from srt_bench.loadgen import run_phase
from srt_bench.records import RequestRecord
from srt_bench.testing import (
    FixedStreamServer,
    ServerBehaviour,
    TokenSchedule,
    prompt_key,
    token_times,
)
from srt_bench.testing.timing import build_delivery_error

SCHEDULE = TokenSchedule(ttft_s=0.030, itl_s=0.005, jitter=0.2, seed=7)


def test_token_times_are_reproducible_per_prompt_and_within_the_jitter() -> None:
    times = token_times(SCHEDULE, "w1 w2", 50)
    assert times == token_times(SCHEDULE, "w1 w2", 50)
    assert times != token_times(SCHEDULE, "w1 w3", 50)
    assert times != token_times(TokenSchedule(ttft_s=0.03, itl_s=0.005, jitter=0.2), "w1 w2", 50)
    assert 0.024 <= times[0] <= 0.036
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert all(0.004 <= g <= 0.006 for g in gaps)
    assert len(set(gaps)) == len(gaps)
    flat = token_times(TokenSchedule(ttft_s=0.01, itl_s=0.002), "x", 3)
    assert flat == pytest.approx((0.010, 0.012, 0.014))
    assert prompt_key(None, ["a ", "b"]) == "a b" and prompt_key("p") == "p"


def _send(url: str, prompts: list[str], tokens: int, api: str) -> list[RequestRecord]:
    requests = [
        PreparedRequest(
            body=build_request_body(
                api=api,  # type: ignore[arg-type]
                model="tiny",
                prompt=p,
                max_tokens=tokens,
                ignore_eos=True,
            ),
            prompt_tokens=2,
        )
        for p in prompts
    ]

    async def go() -> list[RequestRecord]:
        client = StreamClient(
            endpoint=url,
            api=api,  # type: ignore[arg-type]
            reuse_connections=True,
            timeout_seconds=10,
        )
        try:
            run = await run_phase(client, requests, concurrency=4, rate=float("inf"), seed=0)
        finally:
            await client.aclose()
        return list(run.records)

    return asyncio.run(go())


@pytest.mark.parametrize("api", ["completions", "chat"])
def test_the_server_sends_every_token_on_its_schedule(api: str) -> None:
    prompts = [f"w{i} w{i + 1}" for i in range(8)]
    behaviour = ServerBehaviour(honour_max_tokens=True, schedule=SCHEDULE)
    with FixedStreamServer(behaviour) as server:
        records = _send(server.url, prompts, 12, api)
        stats = httpx.get(f"{server.url}/schedule_stats").json()
        again = httpx.get(f"{server.url}/schedule_stats").json()
    # every token was written on the schedule (how late the writes were, `p99_ms`, is this
    # machine's: benchmarks/client_capacity.py prints it)
    assert stats["writes"] == 8 * 12 and again["writes"] == 0
    assert stats["p99_ms"] is not None
    for prompt, r in zip(prompts, records, strict=True):
        truth = token_times(SCHEDULE, prompt, 12)
        # every token arrived; tokens read together form one chunk (one gap per chunk boundary)
        assert r.success and r.output_tokens == 12 and sum(r.chunk_tokens) == 12
        assert len(r.itls) == len(r.chunk_times) - 1
        assert r.ttft is not None
        # a token cannot arrive before the server sent it (how soon after: the timing error
        # benchmarks/client_capacity.py measures)
        assert truth[0] - 0.001 <= r.ttft  # order: written at its due time, then received
        arrivals = [t - r.send_time for t in r.chunk_times]
        assert arrivals == sorted(arrivals)
        # a chunk arrives no earlier than the due time of the last token in it
        last_tokens = list(itertools.accumulate(r.chunk_tokens))
        for n, seen in zip(last_tokens, arrivals, strict=True):
            assert truth[n - 1] - 0.001 <= seen  # order: written at its due time, then received


def test_without_a_schedule_the_stream_comes_at_once() -> None:
    with FixedStreamServer(ServerBehaviour(honour_max_tokens=True)) as server:
        records = _send(server.url, ["w1 w2"], 12, "completions")
        stats = json.loads(httpx.get(f"{server.url}/schedule_stats").text)
    # no token was held for a schedule: the server wrote none on a timer
    assert records[0].success and records[0].output_tokens == 12
    assert stats == {"writes": 0, "p50_ms": None, "p99_ms": None, "max_ms": None}


def test_the_server_keeps_each_write_time_and_our_stamps_follow_them() -> None:
    """`GET /sent_times` gives, by request `user`, when each token left the server, on the
    clock our client stamps with (so a client's own delay is measurable, not only the total)."""
    users = [f"u{i}" for i in range(4)]
    requests = [
        PreparedRequest(
            body=build_request_body(
                api="completions",
                model="tiny",
                prompt=f"w{i} w{i + 1}",
                max_tokens=12,
                ignore_eos=True,
                extra={"user": user},
            ),
            prompt_tokens=2,
        )
        for i, user in enumerate(users)
    ]

    async def go(url: str) -> list[RequestRecord]:
        client = StreamClient(
            endpoint=url, api="completions", reuse_connections=True, timeout_seconds=10
        )
        try:  # origin 0.0: the records keep absolute perf_counter stamps
            return list(await asyncio.gather(*(client.send(r, origin=0.0) for r in requests)))
        finally:
            await client.aclose()

    behaviour = ServerBehaviour(honour_max_tokens=True, schedule=SCHEDULE)
    with FixedStreamServer(behaviour) as server:
        records = asyncio.run(go(server.url))
        sent = httpx.get(f"{server.url}/sent_times").json()
        answered = time.perf_counter()  # the server's loop kept every write time before this
        again = httpx.get(f"{server.url}/sent_times").json()
    assert sorted(sent) == users and again == {}
    for user, r in zip(users, records, strict=True):
        assert r.success and len(sent[user]) == 12 and len(r.chunk_times) == 12
        assert sent[user] == sorted(sent[user])
        # on our clock: every write falls between this request's send and the answer to
        # GET /sent_times (the server takes each write's time after the write call, so the
        # distance from a write to our stamp, the client's delay, is
        # benchmarks/client_capacity.py's to print)
        assert r.send_time <= sent[user][0]  # order: sent, then answered
        assert sent[user][-1] <= answered  # order: kept by the loop before it answered the GET
    e = build_delivery_error(
        [(r.chunk_times, sent[u]) for u, r in zip(users, records, strict=True)]
    )
    assert e is not None and e.itl_p99_ms is not None
