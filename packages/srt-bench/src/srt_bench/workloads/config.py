"""The workload block of `bench.json`: what sa-bench sends besides independent random prompts.

A tagged union on `kind`, decoded with the rest of `BenchRunConfig` (unknown fields are errors).
Lengths are tokens of the model's tokenizer; times are seconds. Every workload is deterministic
from the run's `seed`: the same seed gives byte-identical prompts and schedules.

- `multi-turn`: conversations of `turns` requests; each turn sends the whole history (every earlier
  user text and the answer the server gave) plus a new user text of `isl` tokens (drawn with
  `random_range_ratio`), and asks for `osl` tokens; `think_time_s` (uniform within
  `think_time_jitter`) passes between an answer and the next turn.
- `shared-prefix`: `groups` prefixes of `prefix_tokens`; a request uses one (uniformly chosen) with
  probability `prefix_ratio`, else a prefix of its own, followed by `suffix_tokens` of its own.
- `trace-replay`: a Mooncake-format JSON Lines trace, replayed on its `timestamp`s divided by
  `speedup`; requests that share `hash_ids` share those prompt blocks.
"""

from __future__ import annotations

from typing import assert_never

import msgspec

from srt_bench.errors import BenchConfigError

__all__ = [
    "DEFAULT_KV_BLOCK_TOKENS",
    "MOONCAKE_BLOCK_TOKENS",
    "MultiTurn",
    "SharedPrefix",
    "TraceReplay",
    "Workload",
    "check_workload",
    "workload_label",
]

#: The block size the prefix hit potential of synthetic workloads is counted in (vLLM's default
#: KV block size): a prompt's tokens after its last full block are never counted as a hit.
DEFAULT_KV_BLOCK_TOKENS = 16
#: Tokens per `hash_ids` entry of a Mooncake trace (the format's fixed block size).
MOONCAKE_BLOCK_TOKENS = 512


class _Base(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, tag_field="kind"
):
    pass


class MultiTurn(_Base, frozen=True, kw_only=True, tag="multi-turn"):
    #: Requests per conversation (>= 1).
    turns: int
    #: Mean seconds between the end of an answer and the next turn (0: at once).
    think_time_s: float = 0.0
    #: Think times are uniform in `[t * (1 - j), t * (1 + j)]`; 0 <= j <= 1.
    think_time_jitter: float = 0.0
    #: Conversations per phase; None: `ceil(concurrency * num_prompts_mult / turns)`, at least the
    #: concurrency. Concurrency counts conversations in flight; `req_rate` their arrivals.
    conversations: int | None = None
    #: Block size (tokens) of the prefix hit potential.
    kv_block_tokens: int = DEFAULT_KV_BLOCK_TOKENS


class SharedPrefix(_Base, frozen=True, kw_only=True, tag="shared-prefix"):
    #: Distinct shared prefixes (>= 1).
    groups: int
    #: Tokens of each prefix (>= 1).
    prefix_tokens: int
    #: Tokens every request adds after its prefix (>= 1).
    suffix_tokens: int
    #: Fraction of requests that use a group prefix (0..1); the others get a prefix of their own.
    prefix_ratio: float = 1.0
    kv_block_tokens: int = DEFAULT_KV_BLOCK_TOKENS


class TraceReplay(_Base, frozen=True, kw_only=True, tag="trace-replay"):
    #: The trace: one `{"timestamp": ms, "input_length", "output_length", "hash_ids": [...]}` per
    #: line (other keys are ignored).
    path: str
    #: Arrival times are divided by this (2.0 replays twice as fast).
    speedup: float = 1.0
    #: Replay only the first N rows (None: all).
    max_requests: int | None = None
    #: Tokens per hash id.
    block_tokens: int = MOONCAKE_BLOCK_TOKENS


Workload = MultiTurn | SharedPrefix | TraceReplay


def workload_label(workload: Workload) -> str:
    """The `kind` tag (`multi-turn`, `shared-prefix`, `trace-replay`)."""
    match workload:
        case MultiTurn():
            return "multi-turn"
        case SharedPrefix():
            return "shared-prefix"
        case TraceReplay():
            return "trace-replay"
        case _:
            assert_never(workload)


def _need(ok: bool, path: str, value: object, allowed: str) -> None:
    if not ok:
        raise BenchConfigError(
            f"$.workload.{path}: {value!r} is out of range; it must be {allowed}"
        )


def check_workload(workload: Workload) -> None:
    """Ranges of every field (raises `BenchConfigError` naming the `$.workload` path)."""
    match workload:
        case MultiTurn():
            _need(workload.turns >= 1, "turns", workload.turns, ">= 1")
            _need(workload.think_time_s >= 0, "think_time_s", workload.think_time_s, ">= 0")
            j = workload.think_time_jitter
            _need(0.0 <= j <= 1.0, "think_time_jitter", j, "in [0, 1]")
            n = workload.conversations
            _need(n is None or n >= 1, "conversations", n, ">= 1 or null")
            _need(
                workload.kv_block_tokens >= 1, "kv_block_tokens", workload.kv_block_tokens, ">= 1"
            )
        case SharedPrefix():
            _need(workload.groups >= 1, "groups", workload.groups, ">= 1")
            _need(workload.prefix_tokens >= 1, "prefix_tokens", workload.prefix_tokens, ">= 1")
            _need(workload.suffix_tokens >= 1, "suffix_tokens", workload.suffix_tokens, ">= 1")
            r = workload.prefix_ratio
            _need(0.0 <= r <= 1.0, "prefix_ratio", r, "in [0, 1]")
            _need(
                workload.kv_block_tokens >= 1, "kv_block_tokens", workload.kv_block_tokens, ">= 1"
            )
        case TraceReplay():
            _need(workload.speedup > 0, "speedup", workload.speedup, "> 0")
            n = workload.max_requests
            _need(n is None or n >= 1, "max_requests", n, ">= 1 or null")
            _need(workload.block_tokens >= 1, "block_tokens", workload.block_tokens, ">= 1")
        case _:
            assert_never(workload)
