"""Workloads of our own client beyond independent random prompts: multi-turn conversations,
shared-prefix groups and Mooncake trace replay, each deterministic from the run's seed, with the
prefix hit potential of every measured window (see `config` for the fields)."""

from __future__ import annotations

from srt_bench.workloads.config import (
    DEFAULT_KV_BLOCK_TOKENS,
    MOONCAKE_BLOCK_TOKENS,
    MultiTurn,
    SharedPrefix,
    TraceReplay,
    Workload,
    check_workload,
    workload_label,
)
from srt_bench.workloads.kv import BlockChain, PrefixReuse, build_prefix_reuse, chain_from_ids
from srt_bench.workloads.session import WorkloadPhase, WorkloadSession, build_workload_summary

__all__ = [
    "DEFAULT_KV_BLOCK_TOKENS",
    "MOONCAKE_BLOCK_TOKENS",
    "BlockChain",
    "MultiTurn",
    "PrefixReuse",
    "SharedPrefix",
    "TraceReplay",
    "Workload",
    "WorkloadPhase",
    "WorkloadSession",
    "build_prefix_reuse",
    "build_workload_summary",
    "chain_from_ids",
    "check_workload",
    "workload_label",
]
