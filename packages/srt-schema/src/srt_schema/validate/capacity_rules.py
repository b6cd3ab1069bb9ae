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

from srt_schema.capacity_axis import (
    DEFAULT_MIN_REQUEST_RATE,
    RATE_FIELDS,
    build_rate_grid,
    format_rate,
    short_points,
)
from srt_schema.errors import Issue
from srt_schema.recipe import (
    CapacitySearchConfig,
    MultiTurnWorkload,
    SharedPrefixWorkload,
    TraceReplayWorkload,
)
from srt_schema.validate.context import Context

__all__ = ["RULES"]


def capacity(ctx: Context) -> Iterator[Issue]:
    """A search needs a target, a range that is not empty, and chooses its own concurrencies
    (on the rate axis: its own request rates)."""
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
    if search.axis == "request_rate":
        yield from _rate_axis(ctx)
    elif search.min_concurrency > search.max_concurrency:
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


def rate_fields(ctx: Context) -> Iterator[Issue]:
    """The rate axis's fields mean nothing on the concurrency axis."""
    bench = ctx.recipe.benchmark
    search = bench.capacity
    if search is None or bench.type != "sa-bench" or search.axis != "concurrency":
        return
    fields = msgspec.structs.asdict(search)
    for name in RATE_FIELDS:
        value = fields[name]
        if value is not None:
            yield ctx.issue(
                f"$.benchmark.capacity.{name}",
                f"{name} {value:g} applies to axis request_rate only; set axis: request_rate "
                f"or drop {name}",
            )


def _rate_axis(ctx: Context) -> Iterator[Issue]:
    bench = ctx.recipe.benchmark
    search = bench.capacity
    assert search is not None
    top = search.max_request_rate
    if top is None:
        yield ctx.issue(
            "$.benchmark.capacity.max_request_rate",
            "axis request_rate needs max_request_rate (the highest rate measured, in "
            "requests/s); set e.g. max_request_rate: 64",
        )
    else:
        grid = build_rate_grid(search, top)
        low = search.min_request_rate
        bottom = DEFAULT_MIN_REQUEST_RATE if low is None else low
        if low is not None and low > top:
            yield ctx.issue(
                "$.benchmark.capacity.min_request_rate",
                f"min_request_rate {low:g} is above max_request_rate {top:g}; set "
                "min_request_rate <= max_request_rate",
            )
        elif short := short_points(grid.step, search.seconds_per_point):
            yield ctx.issue("$.benchmark.capacity.seconds_per_point", short)
        elif grid.min_level > grid.max_level:
            yield ctx.issue(
                "$.benchmark.capacity.request_rate_step",
                f"no multiple of request_rate_step {format_rate(grid.step)} lies in "
                f"[{format_rate(bottom)}, {format_rate(top)}] requests/s; set a smaller "
                "request_rate_step or a wider range",
            )
    fields = msgspec.structs.asdict(search)
    defaults = msgspec.structs.asdict(CapacitySearchConfig(targets=search.targets))
    for name in ("min_concurrency", "max_concurrency"):
        value = fields[name]
        if value != defaults[name]:
            yield ctx.issue(
                f"$.benchmark.capacity.{name}",
                f"{name} {value} applies to axis concurrency only; drop {name} (a rate point "
                "lets every request in as it arrives)",
            )
    rate = bench.req_rate
    if rate is not None and str(rate).strip().lower() not in ("inf", "infinity"):
        yield ctx.issue(
            "$.benchmark.req_rate",
            f"axis request_rate chooses each point's request rate itself; drop "
            f"benchmark.req_rate ({rate!r})",
        )
    if bench.num_prompts_mult is not None:
        yield ctx.issue(
            "$.benchmark.num_prompts_mult",
            f"num_prompts_mult {bench.num_prompts_mult} sizes concurrency points only; a point "
            "of axis request_rate measures ceil(rate x seconds_per_point) requests: drop "
            "num_prompts_mult and set capacity.seconds_per_point",
        )
    if bench.workload is not None:
        yield ctx.issue(
            "$.benchmark.workload",
            "a capacity search on axis request_rate sends independent prompts only; drop "
            "benchmark.workload or set axis: concurrency",
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


RULES = (capacity, rate_fields, workload)
