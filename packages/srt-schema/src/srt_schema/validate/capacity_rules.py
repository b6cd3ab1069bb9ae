"""Rules for ``benchmark.capacity`` and ``benchmark.workload`` (extensions of this project,
docs/schema-extensions.md).

Only sa-bench reads either field: the generic "does not use" rule of ``benchmark_rules`` refuses
them for every other ``benchmark.type`` (``registry.BENCHMARK_FIELDS``). Ranges are
``registry.FIELD_BOUNDS`` (the structural check). What is left is cross-field, refused here
instead of at run time by srt-bench.
"""

from __future__ import annotations

from collections.abc import Iterator

import msgspec

from srt_schema.errors import Issue
from srt_schema.recipe import MultiTurnWorkload, SharedPrefixWorkload, TraceReplayWorkload
from srt_schema.validate.context import Context

__all__ = ["RULES"]


def capacity(ctx: Context) -> Iterator[Issue]:
    """A search needs a target, a range that is not empty, and chooses its own concurrencies."""
    bench = ctx.recipe.benchmark
    search = bench.capacity
    if search is None or bench.type != "sa-bench":
        return
    targets = {k: v for k, v in msgspec.structs.asdict(search.targets).items() if v is not None}
    if not targets:
        yield ctx.issue(
            "$.benchmark.capacity.targets",
            "a capacity search needs at least one latency target; set e.g. ttft_p99_ms: 500 "
            "(any of ttft, tpot, itl, e2el at p50, p90 or p99, in milliseconds)",
        )
    if search.min_concurrency > search.max_concurrency:
        yield ctx.issue(
            "$.benchmark.capacity.min_concurrency",
            f"min_concurrency {search.min_concurrency} is above max_concurrency "
            f"{search.max_concurrency}; set min_concurrency <= max_concurrency",
        )
    if bench.concurrencies is not None:
        yield ctx.issue(
            "$.benchmark.concurrencies",
            "benchmark.capacity chooses the concurrencies it measures itself; drop "
            "benchmark.concurrencies (or drop benchmark.capacity to run the fixed list)",
        )


def workload(ctx: Context) -> Iterator[Issue]:
    """What each workload needs of the rest of the benchmark block (srt-bench's run-time checks,
    refused at validate)."""
    bench = ctx.recipe.benchmark
    w = bench.workload
    if w is None or bench.type != "sa-bench":
        return
    kind = w.__struct_config__.tag
    if bench.dataset_name == "custom":
        yield ctx.issue(
            "$.benchmark.dataset_name",
            f"a {kind} workload builds its own prompts; drop dataset_name: custom (and "
            "dataset_path) or drop benchmark.workload",
        )
    match w:
        case MultiTurnWorkload():
            missing = [k for k, v in (("isl", bench.isl), ("osl", bench.osl)) if v is None]
            if missing:
                yield ctx.issue(
                    f"$.benchmark.{missing[0]}",
                    "a multi-turn workload needs isl (tokens of each new user text) and osl "
                    "(tokens of each answer); set both, e.g. isl: 128, osl: 64",
                )
        case SharedPrefixWorkload():
            if bench.osl is None:
                yield ctx.issue(
                    "$.benchmark.osl",
                    "a shared-prefix workload needs osl (tokens of each answer); set e.g. "
                    "osl: 64 (the prompt is prefix_tokens + suffix_tokens)",
                )
            if bench.isl is not None:
                yield ctx.issue(
                    "$.benchmark.isl",
                    "a shared-prefix workload's prompt is prefix_tokens + suffix_tokens; drop "
                    "benchmark.isl",
                )
        case TraceReplayWorkload():
            for name, value in (("isl", bench.isl), ("osl", bench.osl)):
                if value is not None:
                    yield ctx.issue(
                        f"$.benchmark.{name}",
                        "a trace-replay workload takes every length from its trace; drop "
                        f"benchmark.{name}",
                    )


RULES = (capacity, workload)
