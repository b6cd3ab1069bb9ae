"""The recipe's `benchmark.workload`: what sa-bench sends besides independent random prompts.

The structs are the recipe schema's own (`srt_schema.recipe.MultiTurnWorkload`,
`SharedPrefixWorkload`, `TraceReplayWorkload`: an extension of this project,
docs/schema-extensions.md), a tagged union on `type`, decoded with the rest of `bench.json`
(unknown fields are errors). The short names below are this package's spelling of them. Lengths
are tokens of the model's tokenizer; times are seconds. Every workload is deterministic from the
run's `seed`: the same seed gives byte-identical prompts and schedules.

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
from srt_schema.recipe import MultiTurnWorkload, SharedPrefixWorkload, TraceReplayWorkload
from srt_schema.registry import FIELD_BOUNDS

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

MultiTurn = MultiTurnWorkload
SharedPrefix = SharedPrefixWorkload
TraceReplay = TraceReplayWorkload
Workload = MultiTurnWorkload | SharedPrefixWorkload | TraceReplayWorkload

#: The block size the prefix hit potential of synthetic workloads is counted in (vLLM's default
#: KV block size, the schema's default): a prompt's tokens after its last full block are never
#: counted as a hit.
DEFAULT_KV_BLOCK_TOKENS: int = MultiTurnWorkload(turns=1).kv_block_tokens
#: Tokens per `hash_ids` entry of a Mooncake trace (the format's fixed block size).
MOONCAKE_BLOCK_TOKENS: int = TraceReplayWorkload(path="-").block_tokens


def workload_label(workload: Workload) -> str:
    """The `type` tag (`multi-turn`, `shared-prefix`, `trace-replay`)."""
    match workload:
        case MultiTurnWorkload():
            return "multi-turn"
        case SharedPrefixWorkload():
            return "shared-prefix"
        case TraceReplayWorkload():
            return "trace-replay"
        case _:
            assert_never(workload)


def check_workload(workload: Workload) -> None:
    """The ranges `srtctl validate` checks (`srt_schema.registry.FIELD_BOUNDS`), kept here as a
    defensive check of a hand-written run config; raises `BenchConfigError` naming the path."""
    owner = type(workload).__name__
    for name, value in msgspec.structs.asdict(workload).items():
        bound = FIELD_BOUNDS.get((owner, name))
        if bound is not None and isinstance(value, int | float) and not bound.allows(value):
            raise BenchConfigError(
                f"$.benchmark.workload.{name}: {value!r} is out of range; {name} must be "
                f"{bound.describe()}"
            )
