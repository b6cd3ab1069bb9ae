"""One run's workload: the requests of warmups and test prompts, each formal phase, its summary.

sa-bench calls `WorkloadSession` where it would otherwise draw independent random prompts; the
summary becomes the result document's `workload` block and the rollup's workload fields.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any, assert_never

import msgspec

from srt_bench.client import Api, PreparedRequest
from srt_bench.loadgen import PhaseRun, Sender, run_phase
from srt_bench.records import RequestRecord
from srt_bench.stats import percentile
from srt_bench.tokenizer import BenchTokenizer
from srt_bench.workloads.config import (
    MultiTurn,
    SharedPrefix,
    TraceReplay,
    Workload,
    workload_label,
)
from srt_bench.workloads.drive import run_conversations, run_scheduled
from srt_bench.workloads.kv import BlockChain, build_prefix_reuse, chain_from_ids
from srt_bench.workloads.multi_turn import (
    Conversation,
    History,
    build_conversations,
    conversation_count,
)
from srt_bench.workloads.requests import SingleShot, build_body
from srt_bench.workloads.shared_prefix import build_group_prefixes, build_shared_prefix
from srt_bench.workloads.text import PieceMaker
from srt_bench.workloads.trace import TraceRow, build_trace_requests, read_trace
from srt_schema.bench_result import WorkloadSummary

__all__ = ["WorkloadPhase", "WorkloadSession", "build_workload_summary"]

#: Prompt and answer tokens of the warmup and test requests of a trace replay (neutral prompts
#: of their own: a warmup replaying trace rows would fill the server's cache with their blocks).
_TRACE_WARMUP_TOKENS = (32, 8)


class WorkloadPhase(msgspec.Struct, frozen=True, kw_only=True):
    run: PhaseRun
    #: One per record, in record order.
    chains: tuple[BlockChain, ...]
    #: Kind-specific numbers for the summary.
    extra: dict[str, Any]


class WorkloadSession:
    def __init__(
        self,
        workload: Workload,
        tokenizer: BenchTokenizer,
        *,
        api: Api,
        model: str,
        isl: int | None,
        osl: int | None,
        range_ratio: float,
        prompts_mult: int,
        run_seed: int,
    ) -> None:
        self.workload = workload
        self.maker = PieceMaker(tokenizer)
        self.api: Api = api
        self.model = model
        self.isl = isl or 0
        self.osl = osl or 0
        self.range_ratio = range_ratio
        self.prompts_mult = prompts_mult
        self.run_seed = run_seed
        self._groups: list[str] = []
        self._rows: list[TraceRow] = []
        match workload:
            case SharedPrefix():
                self._groups = build_group_prefixes(self.maker, workload, run_seed)
            case TraceReplay():
                self._rows = read_trace(Path(workload.path), workload.max_requests)
            case MultiTurn():
                pass
            case _:
                assert_never(workload)

    def _shared(self, w: SharedPrefix, count: int, seed: int) -> SingleShot:
        return build_shared_prefix(
            self.maker,
            w,
            groups=self._groups,
            count=count,
            osl=self.osl,
            range_ratio=self.range_ratio,
            seed=seed,
            api=self.api,
            model=self.model,
        )

    def _conversations(self, w: MultiTurn, count: int, seed: int) -> list[Conversation]:
        return build_conversations(
            self.maker,
            w,
            count=count,
            isl=self.isl,
            osl=self.osl,
            range_ratio=self.range_ratio,
            seed=seed,
        )

    def single_requests(self, count: int, seed: int) -> list[PreparedRequest]:
        """Independent requests of the workload's shape (warmups, the test prompt)."""
        w = self.workload
        match w:
            case SharedPrefix():
                return list(self._shared(w, count, seed).requests)
            case MultiTurn():
                convs = self._conversations(w, count, seed)
                return [
                    History(c, self.maker, api=self.api, model=self.model).request(0) for c in convs
                ]
            case TraceReplay():
                rng = random.Random(f"trace-warmup:{seed}")
                n, o = _TRACE_WARMUP_TOKENS
                return [
                    PreparedRequest(
                        body=build_body(
                            api=self.api,
                            model=self.model,
                            contents=[self.maker.draw(rng, n)],
                            max_tokens=o,
                        ),
                        prompt_tokens=n,
                    )
                    for _ in range(count)
                ]
            case _:
                assert_never(w)

    def planned_requests(self, concurrency: int) -> int:
        w = self.workload
        match w:
            case SharedPrefix():
                return concurrency * self.prompts_mult
            case MultiTurn():
                return conversation_count(w, concurrency, self.prompts_mult) * w.turns
            case TraceReplay():
                return len(self._rows)
            case _:
                assert_never(w)

    async def formal(
        self, sender: Sender, *, concurrency: int, rate: float, seed: int
    ) -> WorkloadPhase:
        w = self.workload
        match w:
            case SharedPrefix():
                shot = self._shared(w, concurrency * self.prompts_mult, seed)
                run = await run_phase(
                    sender, shot.requests, concurrency=concurrency, rate=rate, seed=seed + 1
                )
                extra: dict[str, Any] = {
                    "groups": w.groups,
                    "prefix_tokens": w.prefix_tokens,
                    "suffix_tokens": w.suffix_tokens,
                    "prefix_ratio": w.prefix_ratio,
                    "kv_block_tokens": w.kv_block_tokens,
                }
                return WorkloadPhase(run=run, chains=shot.chains, extra=extra)
            case MultiTurn():
                n = conversation_count(w, concurrency, self.prompts_mult)
                convs = self._conversations(w, n, seed)
                conv_run = await run_conversations(
                    sender,
                    convs,
                    self.maker,
                    api=self.api,
                    model=self.model,
                    concurrency=concurrency,
                    rate=rate,
                    seed=seed + 1,
                )
                chains = tuple(chain_from_ids(i, w.kv_block_tokens) for i in conv_run.prompt_ids)
                extra = {
                    "conversations": n,
                    "turns": w.turns,
                    "think_time_s": w.think_time_s,
                    "think_time_jitter": w.think_time_jitter,
                    "kv_block_tokens": w.kv_block_tokens,
                }
                return WorkloadPhase(run=conv_run.phase, chains=chains, extra=extra)
            case TraceReplay():
                shot = build_trace_requests(
                    self.maker, self._rows, w, seed=self.run_seed, api=self.api, model=self.model
                )
                assert shot.offsets is not None
                sched = await run_scheduled(
                    sender, shot.requests, shot.offsets, concurrency=concurrency
                )
                lag_ms = [lag * 1000.0 for lag in sched.start_lag]
                extra = {
                    "trace_file": w.path,
                    "trace_rows": len(self._rows),
                    "speedup": w.speedup,
                    "kv_block_tokens": w.block_tokens,
                    "trace_span_s": shot.offsets[-1],
                    "start_lag_p50_ms": percentile(lag_ms, 50.0),
                    "start_lag_p99_ms": percentile(lag_ms, 99.0),
                }
                return WorkloadPhase(run=sched.phase, chains=shot.chains, extra=extra)
            case _:
                assert_never(w)


def build_workload_summary(
    workload: Workload, phase: WorkloadPhase, records: Sequence[RequestRecord]
) -> WorkloadSummary:
    """The result document's `workload` block (pure): prefix reuse of the window in send order,
    and the client's prompt-token counts checked against the server's usage."""
    order = sorted(range(len(records)), key=lambda i: records[i].send_time)
    reuse = build_prefix_reuse([phase.chains[i] for i in order])
    ok = [r for r in records if r.success]
    server = [r.server_prompt_tokens for r in ok]
    mismatches = sum(1 for r in ok if r.server_prompt_tokens not in (None, r.prompt_tokens))
    return WorkloadSummary(
        kind=workload_label(workload),
        **phase.extra,
        prefix_hit_potential=reuse.potential,
        prefix_hit_tokens=reuse.hit_tokens,
        prefix_prompt_tokens=reuse.prompt_tokens,
        requests_with_prefix_hit=reuse.requests_with_hit,
        client_prompt_tokens=sum(r.prompt_tokens for r in ok),
        server_prompt_tokens=None if None in server else sum(s or 0 for s in server),
        prompt_token_mismatches=mismatches,
    )
