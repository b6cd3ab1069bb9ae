"""The registry of benchmark runners: one pure plan builder per `benchmark.type`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import msgspec

from srt_bench.capacity.readings import build_search_spec
from srt_bench.config import BenchRunConfig
from srt_bench.errors import BenchConfigError
from srt_bench.plans import CapacityPlan, ManualPlan, Plan, SaBenchPlan
from srt_bench.runners.accuracy import build_eval
from srt_bench.runners.commands import (
    build_agentperf,
    build_custom,
    build_lm_eval,
    build_mooncake_router,
    build_sglang_bench,
    build_trace_replay,
)
from srt_bench.runners.router_bench import build_router
from srt_bench.sa_bench_settings import build_sa_bench_settings

__all__ = ["REGISTRY", "BuildContext", "build_plan", "registered_types"]


class BuildContext(msgspec.Struct, frozen=True, kw_only=True):
    """What a builder may know about the world, read once by the caller."""

    out_dir: Path
    #: Environment of the run (a few runners read documented variables from it).
    environ: dict[str, str] = {}
    #: `YYYYmmdd_HHMMSS` used in artifact folder names.
    stamp: str = "00000000_000000"


Builder = Callable[[BenchRunConfig, BuildContext], Plan]


def _sa_bench(config: BenchRunConfig) -> Plan:
    """A fixed list of concurrencies, or a capacity search when `benchmark.capacity` is set."""
    settings = build_sa_bench_settings(config)
    search = config.benchmark.capacity
    if search is None:
        return SaBenchPlan(settings=settings)
    return CapacityPlan(settings=settings, spec=build_search_spec(search))


REGISTRY: Mapping[str, Builder] = {
    "manual": lambda _c, _x: ManualPlan(),
    "sa-bench": lambda c, _x: _sa_bench(c),
    "custom": lambda c, x: build_custom(c, x.out_dir),
    "lm-eval": lambda c, x: build_lm_eval(c, x.out_dir, x.environ),
    "sglang-bench": lambda c, x: build_sglang_bench(c, x.out_dir, x.environ),
    "router": lambda c, x: build_router(c, x.out_dir),
    "agentperf": lambda c, x: build_agentperf(c, x.out_dir, x.environ),
    "mooncake-router": lambda c, x: build_mooncake_router(c, x.out_dir, x.stamp),
    "trace-replay": lambda c, x: build_trace_replay(c, x.out_dir, x.stamp),
    "gsm8k": lambda c, _x: build_eval(c, "gsm8k"),
    "mmlu": lambda c, _x: build_eval(c, "mmlu"),
    "gpqa": lambda c, _x: build_eval(c, "gpqa"),
    "longbenchv2": lambda c, _x: build_eval(c, "longbenchv2"),
}


def registered_types() -> tuple[str, ...]:
    return tuple(sorted(REGISTRY))


def build_plan(config: BenchRunConfig, context: BuildContext) -> Plan:
    """The plan for `config.benchmark.type`; an unknown type names every registered one."""
    kind = config.benchmark.type
    builder = REGISTRY.get(kind)
    if builder is None:
        raise BenchConfigError(
            f"$.benchmark.type: unknown benchmark type {kind!r}; registered: "
            + ", ".join(registered_types())
        )
    return builder(config, context)
