"""Workloads (multi-turn, shared-prefix, trace replay): determinism, prefix reuse, and sa-bench runs
against the fixed-stream server on 127.0.0.1 (real HTTP), whose usage counts the prompt's words."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from pathlib import Path
from typing import Any

import msgspec
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_fakes.clock import FakeClock

from srt_bench.client import PreparedRequest, StreamClient
from srt_bench.config import BenchRunConfig, decode_run_config
from srt_bench.errors import BenchConfigError, BenchDatasetError
from srt_bench.execute import run_plan
from srt_bench.prompts import read_tokenizer
from srt_bench.records import RequestRecord
from srt_bench.runners import BuildContext, build_plan
from srt_bench.testing import FixedStreamServer, ServerBehaviour, write_tiny_model
from srt_bench.workloads import (
    BlockChain,
    MultiTurn,
    SharedPrefix,
    TraceReplay,
    build_prefix_reuse,
    chain_from_ids,
)
from srt_bench.workloads.drive import (
    ConversationRun,
    ScheduledRun,
    run_conversations,
    run_scheduled,
)
from srt_bench.workloads.multi_turn import build_conversations
from srt_bench.workloads.shared_prefix import build_group_prefixes, build_shared_prefix
from srt_bench.workloads.text import PieceMaker
from srt_bench.workloads.trace import build_trace_requests, read_trace

TRACE_ROWS = [
    {"timestamp": 0, "input_length": 40, "output_length": 5, "hash_ids": [1, 2, 3]},
    {"timestamp": 100, "input_length": 32, "output_length": 4, "hash_ids": [1, 2]},
    {"timestamp": 200, "input_length": 24, "output_length": 3, "hash_ids": [1, 4], "extra": 1},
    {"timestamp": 300, "input_length": 10, "output_length": 2, "hash_ids": [5]},
]


def _write_trace(path: Path, rows: list[dict[str, Any]] = TRACE_ROWS) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _config(
    url: str, model: Path, out: Path, workload: dict[str, Any], **bench: Any
) -> BenchRunConfig:
    benchmark: dict[str, Any] = {
        "type": "sa-bench",
        "isl": 20,
        "osl": 6,
        "concurrencies": [2],
        "num_prompts_mult": 4,
        "num_warmup_mult": 1,
        "random_range_ratio": 1.0,
    }
    benchmark.update(bench, workload=workload)
    doc = {
        "benchmark": benchmark,
        "endpoint": url,
        "model_name": "tiny",
        "tokenizer_path": str(model),
        "total_gpus": 1,
        "output_dir": str(out),
    }
    return decode_run_config(msgspec.json.encode(doc))


def _run(config: BenchRunConfig, out: Path) -> list[str]:
    lines: list[str] = []
    plan = build_plan(config, BuildContext(out_dir=out))
    assert run_plan(plan, config, out, log=lines.append, stop=threading.Event()) == 0
    return lines


def _result(out: Path) -> dict[str, Any]:
    (path,) = out.glob("sa-bench_*/results_concurrency_2_gpus_1.json")
    doc: dict[str, Any] = json.loads(path.read_text())
    return doc


def _server() -> FixedStreamServer:
    return FixedStreamServer(ServerBehaviour(honour_max_tokens=True, count_prompt_tokens=True))


# -- prefix reuse (pure) ------------------------------------------------------------------------
def test_prefix_reuse_counts_leading_blocks_seen_before_in_send_order() -> None:
    a = BlockChain(keys=(1, 2, 3), tokens=(16, 16, 8), prompt_tokens=40)
    b = BlockChain(keys=(1, 2), tokens=(16, 16), prompt_tokens=32)
    c = BlockChain(keys=(1, 4, 2), tokens=(16, 16, 16), prompt_tokens=48)  # 2 after a miss: no hit
    d = BlockChain(keys=(1, 2, 3), tokens=(16, 16, 16), prompt_tokens=48)  # 3 was sent with 8
    reuse = build_prefix_reuse([a, b, c, d])
    assert reuse.hit_tokens == 0 + 32 + 16 + 40
    assert reuse.prompt_tokens == 40 + 32 + 48 + 48
    assert reuse.requests_with_hit == 3
    assert reuse.potential == pytest.approx(88 / 168)
    assert build_prefix_reuse([]).potential is None


def test_chains_of_token_ids_share_only_full_leading_blocks() -> None:
    x = chain_from_ids(list(range(40)), 16)
    y = chain_from_ids([*range(32), 99, 98], 16)
    z = chain_from_ids([7, *range(1, 40)], 16)
    assert x.tokens == (16, 16) and x.prompt_tokens == 40
    assert x.keys == y.keys  # the same 32 leading tokens
    assert z.keys[0] != x.keys[0] and z.keys[1] != x.keys[1]  # chained: a changed first block
    assert build_prefix_reuse([x, y, z]).hit_tokens == 32


# -- determinism --------------------------------------------------------------------------------
def _shared(maker: PieceMaker, seed: int, run_seed: int = 0) -> bytes:
    w = SharedPrefix(groups=3, prefix_tokens=24, suffix_tokens=8, prefix_ratio=0.5)
    shot = build_shared_prefix(
        maker,
        w,
        groups=build_group_prefixes(maker, w, run_seed),
        count=20,
        osl=6,
        range_ratio=0.5,
        seed=seed,
        api="chat",
        model="tiny",
    )
    return msgspec.json.encode(shot)


def _conversations(maker: PieceMaker, seed: int) -> bytes:
    w = MultiTurn(turns=3, think_time_s=0.5, think_time_jitter=0.4)
    convs = build_conversations(maker, w, count=5, isl=12, osl=6, range_ratio=0.5, seed=seed)
    return msgspec.json.encode(convs)


def _trace(maker: PieceMaker, path: Path, seed: int) -> bytes:
    w = TraceReplay(path=str(path), speedup=2.0, block_tokens=16)
    shot = build_trace_requests(maker, read_trace(path), w, seed=seed, api="chat", model="tiny")
    return msgspec.json.encode(shot)


@pytest.mark.parametrize("kind", ["word", "byte-bpe"])
def test_same_seed_same_bytes_other_seed_other_bytes(kind: str, tmp_path: Path) -> None:
    model = write_tiny_model(tmp_path / "model", kind=kind)  # type: ignore[arg-type]
    trace = _write_trace(tmp_path / "trace.jsonl")
    first, again = PieceMaker(read_tokenizer(model)), PieceMaker(read_tokenizer(model))
    assert _shared(first, 1) == _shared(again, 1)
    assert _shared(first, 1) != _shared(first, 2)
    assert _shared(first, 1, run_seed=0) != _shared(first, 1, run_seed=5)
    assert _conversations(first, 1) == _conversations(again, 1)
    assert _conversations(first, 1) != _conversations(first, 2)
    assert _trace(first, trace, 1) == _trace(again, trace, 1)
    assert _trace(first, trace, 1) != _trace(first, trace, 2)


def test_conversation_plans_draw_think_times_within_the_jitter(tiny_model: Path) -> None:
    maker = PieceMaker(read_tokenizer(tiny_model))
    w = MultiTurn(turns=4, think_time_s=2.0, think_time_jitter=0.25)
    convs = build_conversations(maker, w, count=50, isl=10, osl=5, range_ratio=1.0, seed=3)
    think = [t for c in convs for t in c.think_s]
    assert len(think) == 50 * 3
    assert all(1.5 <= t <= 2.5 for t in think)
    assert len(set(think)) == len(think)  # jittered, not constant
    assert all(len(ids) == 10 for c in convs for ids in c.user_ids)


@pytest.mark.parametrize("kind", ["word", "byte-bpe"])
def test_trace_rows_that_share_hash_ids_share_those_prompt_blocks(
    kind: str, tmp_path: Path
) -> None:
    model = write_tiny_model(tmp_path / "model", kind=kind)  # type: ignore[arg-type]
    tokenizer = read_tokenizer(model)
    path = _write_trace(tmp_path / "trace.jsonl")
    w = TraceReplay(path=str(path), speedup=2.0, block_tokens=16)
    shot = build_trace_requests(
        PieceMaker(tokenizer), read_trace(path), w, seed=0, api="completions", model="tiny"
    )
    prompts = [json.loads(r.body)["prompt"] for r in shot.requests]
    ids = [tokenizer.encode(p, add_special_tokens=False).ids for p in prompts]
    assert [len(i) for i in ids] == [40, 32, 24, 10]
    assert [r.prompt_tokens for r in shot.requests] == [40, 32, 24, 10]
    assert ids[1] == ids[0][:32]  # hash ids 1, 2
    assert ids[2][:16] == ids[0][:16] and ids[2][16:] != ids[0][16:24]  # 1 shared, 4 not
    assert ids[3][:10] != ids[0][:10]
    assert shot.offsets == (0.0, 0.05, 0.1, 0.15)
    assert [json.loads(r.body)["max_tokens"] for r in shot.requests] == [5, 4, 3, 2]


def test_a_malformed_trace_line_is_refused_with_its_line_number(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"timestamp": 0, "input_length": 4, "output_length": 1}\n{"timestamp": 1}\n')
    with pytest.raises(BenchDatasetError, match=r"t.jsonl:2: Object missing required field"):
        read_trace(path)


def test_workload_fields_out_of_range_are_refused_with_their_path() -> None:
    bad = {"type": "shared-prefix", "groups": 2, "prefix_tokens": 8, "suffix_tokens": 4}
    benchmark = {"type": "sa-bench", "workload": {**bad, "prefix_ratio": 2}}
    doc = {"benchmark": benchmark, "endpoint": "http://x", "model_name": "m", "total_gpus": 1}
    with pytest.raises(BenchConfigError) as exc:
        decode_run_config(msgspec.json.encode(doc))
    assert str(exc.value) == (
        "bench.json: $.benchmark.workload.prefix_ratio: 2.0 is out of range; prefix_ratio must "
        "be a number in [0, 1]"
    )


def test_a_workload_with_a_custom_dataset_is_refused(tiny_model: Path, tmp_path: Path) -> None:
    config = _config(
        "http://127.0.0.1:1",
        tiny_model,
        tmp_path,
        {"type": "multi-turn", "turns": 2},
        dataset_name="custom",
        dataset_path="/x.jsonl",
    )
    with pytest.raises(
        BenchConfigError, match=r"\$.benchmark.workload: a multi-turn workload builds its own"
    ):
        build_plan(config, BuildContext(out_dir=tmp_path))


# -- runs against the fixed-stream server ---------------------------------------------------------
def test_shared_prefix_run_reports_the_hit_potential_and_matching_token_counts(
    tiny_model: Path, tmp_path: Path
) -> None:
    workload = {"type": "shared-prefix", "groups": 1, "prefix_tokens": 32, "suffix_tokens": 8}
    with _server() as server:
        lines = _run(_config(server.url, tiny_model, tmp_path, workload), tmp_path)
    r = _result(tmp_path)
    n = 8  # concurrency 2 x num_prompts_mult 4
    assert r["completed"] == n and r["input_lens"] == [40] * n and r["output_lens"] == [6] * n
    w = r["workload"]
    # one group: every request after the first reuses the 32-token prefix (2 full blocks)
    assert w["prefix_hit_tokens"] == 32 * (n - 1)
    assert w["prefix_hit_potential"] == pytest.approx(32 * (n - 1) / (40 * n))
    assert w["client_prompt_tokens"] == w["server_prompt_tokens"] == 40 * n
    assert w["prompt_token_mismatches"] == 0
    assert "shared-prefix: prefix hit potential 0.700 (224/320 prompt tokens)" in "\n".join(lines)
    rollup = json.loads((tmp_path / "benchmark-rollup.json").read_text())
    assert rollup["config"] == {"model": "tiny", "isl": 40, "osl": 6}
    (run,) = rollup["runs"]
    assert run["workload"] == "shared-prefix"
    assert run["prefix_hit_potential"] == pytest.approx(0.7)
    assert run["prompt_token_mismatches"] == 0


def test_no_shared_prefix_means_no_hit(tiny_model: Path, tmp_path: Path) -> None:
    workload = {
        "type": "shared-prefix",
        "groups": 1,
        "prefix_tokens": 32,
        "suffix_tokens": 8,
        "prefix_ratio": 0.0,
    }
    with _server() as server:
        _run(_config(server.url, tiny_model, tmp_path, workload), tmp_path)
    assert _result(tmp_path)["workload"]["prefix_hit_tokens"] == 0


@pytest.mark.parametrize("api", [True, False])
def test_multi_turn_carries_the_history_and_the_server_counts_it(
    api: bool, tiny_model: Path, tmp_path: Path
) -> None:
    workload = {"type": "multi-turn", "turns": 3, "think_time_s": 0.05}
    with _server() as server:
        _run(_config(server.url, tiny_model, tmp_path, workload, use_chat_template=api), tmp_path)
        # sanity + warmup 2 + test 1 + 2 conversations... at least c: ceil(2*4/3) = 3 x 3 turns
        assert server.requests == 1 + 2 + 1 + 9
    r = _result(tmp_path)
    assert r["completed"] == 9 and r["requested_num_prompts"] == 9
    # turn k sends k+1 user texts of 20 tokens and k answers of 6: the server counted them all
    assert r["input_lens"] == [20, 46, 72] * 3
    assert r["output_lens"] == [6] * 9
    w = r["workload"]
    assert w["conversations"] == 3 and w["turns"] == 3
    assert w["client_prompt_tokens"] == w["server_prompt_tokens"] == 3 * (20 + 46 + 72)
    assert w["prompt_token_mismatches"] == 0
    # turn k reuses the full 16-token blocks of turn k-1's prompt: 16 of 20, 32 of 46
    assert w["prefix_hit_tokens"] == 3 * (16 + 32)


def test_trace_replay_follows_the_timestamps_and_the_hash_ids(
    tiny_model: Path, tmp_path: Path
) -> None:
    trace = _write_trace(tmp_path / "trace.jsonl")
    workload = {"type": "trace-replay", "path": str(trace), "speedup": 2.0, "block_tokens": 16}
    with _server() as server:
        lines = _run(_config(server.url, tiny_model, tmp_path, workload), tmp_path)
    r = _result(tmp_path)
    assert r["input_lens"] == [40, 32, 24, 10]
    assert r["output_lens"] == [5, 4, 3, 2]
    assert r["isl"] is None and r["osl"] is None
    w = r["workload"]
    assert w["trace_rows"] == 4 and w["trace_span_s"] == pytest.approx(0.15)
    assert w["prefix_hit_tokens"] == 32 + 16  # row 2 reuses blocks 1, 2; row 3 block 1
    assert w["client_prompt_tokens"] == w["server_prompt_tokens"] == 106
    # how late each row started is reported (its value is this machine's: the schedule itself
    # is checked on a fake clock below, test_scheduled_requests_start_at_their_offsets)
    assert {"start_lag_p50_ms", "start_lag_p99_ms"}.issubset(w)
    assert w["start_lag_p50_ms"] <= w["start_lag_p99_ms"]
    assert "trace-replay: prefix hit potential 0.453 (48/106 prompt tokens)" in "\n".join(lines)
    assert (tmp_path / "sa-bench_trace-replay_trace.jsonl").is_dir()


def _converse(url: str, maker: PieceMaker, w: MultiTurn, count: int) -> ConversationRun:
    convs = build_conversations(maker, w, count=count, isl=5, osl=2, range_ratio=1.0, seed=0)

    async def go() -> ConversationRun:
        client = StreamClient(endpoint=url, api="chat", reuse_connections=True, timeout_seconds=10)
        try:
            return await run_conversations(
                client, convs, maker, api="chat", model="tiny", concurrency=2,
                rate=float("inf"), seed=0,
            )  # fmt: skip
        finally:
            await client.aclose()

    return asyncio.run(go())


class _Recording:
    """A sender that logs, per conversation task, each request sent and each answer received."""

    def __init__(self, inner: StreamClient, events: dict[object, list[tuple[str, object]]]) -> None:
        self.inner, self.events = inner, events

    async def send(self, request: PreparedRequest, *, origin: float) -> RequestRecord:
        log = self.events.setdefault(asyncio.current_task(), [])
        log.append(("send", request.prompt_tokens))
        record = await self.inner.send(request, origin=origin)
        log.append(("answer", record.output_tokens))
        return record


def test_think_time_passes_between_an_answer_and_the_next_turn(tiny_model: Path) -> None:
    """Each conversation sends a turn, gets its answer, then waits its planned think time before
    the next turn (the waits go through the injected `sleep`: the order and the seconds asked
    are checked, not how long this machine took)."""
    maker = PieceMaker(read_tokenizer(tiny_model))
    w = MultiTurn(turns=3, think_time_s=0.05, think_time_jitter=0.5)
    plan = build_conversations(maker, w, count=2, isl=5, osl=2, range_ratio=1.0, seed=0)
    events: dict[object, list[tuple[str, object]]] = {}
    clock = FakeClock()

    async def think(seconds: float) -> None:
        events.setdefault(asyncio.current_task(), []).append(("think", seconds))
        await clock.sleep(seconds)

    async def go(url: str) -> ConversationRun:
        client = StreamClient(endpoint=url, api="chat", reuse_connections=True, timeout_seconds=10)
        try:
            return await run_conversations(
                _Recording(client, events), plan, maker, api="chat", model="tiny",
                concurrency=2, rate=float("inf"), seed=0, sleep=think,
            )  # fmt: skip
        finally:
            await client.aclose()

    with _server() as server:
        run = asyncio.run(go(server.url))
    assert all(r.success for r in run.phase.records)
    # one worker task per conversation (concurrency 2, 2 conversations), in plan order
    logs = list(events.values())
    assert len(logs) == 2
    for conv, log in zip(plan, logs, strict=True):
        kinds = [kind for kind, _ in log]
        assert kinds == ["send", "answer", "think"] * 2 + ["send", "answer"]
        assert [v for k, v in log if k == "think"] == list(conv.think_s)
        sends = [v for k, v in log if k == "send"]
        assert sends == sorted(sends) and len(set(sends)) == 3  # the history grows each turn
    assert sorted(clock.sleeps) == sorted(t for conv in plan for t in conv.think_s)
    assert all(t > 0 for t in clock.sleeps)


def test_scheduled_requests_start_at_their_offsets() -> None:
    """`run_scheduled` on a fake clock: each request is sent when its offset is due, the waits
    are the gaps, nothing starts late, and the window lasts until the last offset."""
    clock = FakeClock(now=64.0)  # binary fractions: exact sums
    sent: list[tuple[int, float]] = []

    class Instant:
        async def send(self, request: PreparedRequest, *, origin: float) -> RequestRecord:
            sent.append((request.prompt_tokens, clock() - origin))
            return RequestRecord(success=True, prompt_tokens=request.prompt_tokens)

    requests = [PreparedRequest(body=b"{}", prompt_tokens=i) for i in range(4)]
    offsets = [0.0, 0.25, 0.5, 0.75]
    run = asyncio.run(
        run_scheduled(Instant(), requests, offsets, concurrency=4, clock=clock, sleep=clock.sleep)
    )
    assert sent == [(0, 0.0), (1, 0.25), (2, 0.5), (3, 0.75)]
    assert clock.sleeps == [0.25, 0.25, 0.25]
    assert run.start_lag == (0.0, 0.0, 0.0, 0.0)
    assert run.phase.duration == 0.75
    assert [r.prompt_tokens for r in run.phase.records] == [0, 1, 2, 3]


def test_a_request_waiting_for_a_slot_reports_how_late_it_started() -> None:
    """Concurrency 1: the second request, due at once, waits for the first to finish; its start
    lag is the time the fake clock moved while it waited."""
    clock = FakeClock(now=0.0)
    release = asyncio.Event()

    class Held:
        async def send(self, request: PreparedRequest, *, origin: float) -> RequestRecord:
            if request.prompt_tokens == 0:
                await release.wait()
            return RequestRecord(success=True, prompt_tokens=request.prompt_tokens)

    async def go() -> ScheduledRun:
        requests = [PreparedRequest(body=b"{}", prompt_tokens=i) for i in range(2)]
        running = asyncio.create_task(
            run_scheduled(
                Held(), requests, [0.0, 0.0], concurrency=1, clock=clock, sleep=clock.sleep
            )
        )
        for _ in range(3):
            await asyncio.sleep(0)  # the first request is in flight, the second waits
        clock.now += 0.25
        release.set()
        return await running

    run = asyncio.run(go())
    assert run.start_lag == (0.0, 0.25)
    assert clock.sleeps == []


def test_a_failed_turn_ends_its_conversation(tiny_model: Path) -> None:
    maker = PieceMaker(read_tokenizer(tiny_model))
    behaviour = ServerBehaviour(honour_max_tokens=True, fail_every=2)
    with FixedStreamServer(behaviour) as server:
        run = _converse(server.url, maker, MultiTurn(turns=3), 1)
    # request 1 ok, request 2 fails: turn 2 is never sent
    errors = [r.error for r in run.phase.records]
    assert errors[0] == "" and errors[1].startswith("HTTP 500")
    assert errors[2] == "not sent: turn 1 of this conversation failed"
    assert [len(ids) for ids in run.prompt_ids] == [5, 5 + 2 + 5, 0]
