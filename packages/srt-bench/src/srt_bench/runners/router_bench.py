"""The `router` runner: how much the SGLang router's prefix caching gains as more of each prompt
is shared. One `aiperf profile` per prefix ratio r (synthetic prompts of `isl` tokens: a prefix
of `int(isl x r)` drawn from a pool of shared ones, then a part of their own; seeds counting up
from the initial one), then a summary per ratio (docs/telemetry-and-bench.md#router). Building the
plan and the summary are pure; the fold in srt_bench.execute reads aiperf's exports."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from srt_bench.config import BenchRunConfig
from srt_bench.errors import BenchConfigError, BenchDatasetError
from srt_bench.plans import Command, CommandPlan, RouterSweep
from srt_bench.runners._aiperf_args import aiperf_extra_flags, aiperf_profile
from srt_schema.registry import ROUTER_BENCH_FRONTEND
from srt_schema.rollup import RollupConfig
from srt_schema.router_bench import ROUTER_BENCH, parse_prefix_ratios

__all__ = [
    "FOLDER",
    "SUMMARY_FILE",
    "build_router",
    "encode_summary",
    "ratio_folder",
    "router_summary",
]

#: The folder the runner writes under the benchmark's output folder, and the summary in it.
FOLDER = "router-bench"
SUMMARY_FILE = "results_summary.json"


def ratio_folder(out_dir: Path, ratio: float, seed: int) -> Path:
    return out_dir / FOLDER / f"prefix_ratio_{ratio:g}_seed_{seed}"


def build_router(config: BenchRunConfig, out_dir: Path) -> CommandPlan:
    """The aiperf runs, in the order of `prefix_ratios`; `aiperf_package` picks the aiperf
    (`uvx --from <spec>`) and `aiperf_args` are appended to every run."""
    b = config.benchmark
    if config.frontend_type != ROUTER_BENCH_FRONTEND:
        raise BenchConfigError(
            f"$.benchmark.type: 'router' needs frontend.type {ROUTER_BENCH_FRONTEND!r}, "
            f"got {config.frontend_type!r}"
        )
    try:
        ratios = parse_prefix_ratios(b.prefix_ratios)
    except ValueError as exc:
        raise BenchConfigError(f"$.benchmark.prefix_ratios: {exc}") from None
    sweep = RouterSweep(
        prefix_ratios=ratios,
        isl=b.isl or ROUTER_BENCH.isl,
        osl=b.osl or ROUTER_BENCH.osl,
        requests=b.num_requests or ROUTER_BENCH.num_requests,
        concurrency=b.concurrency or ROUTER_BENCH.concurrency,
        initial_seed=ROUTER_BENCH.initial_seed,
        model=config.model_name,
        tokenizer=config.tokenizer_path,
    )
    commands: list[Command] = []
    artifacts: dict[int, str] = {}
    for i, ratio in enumerate(ratios):
        folder = ratio_folder(out_dir, ratio, sweep.initial_seed + i)
        artifacts[i] = str(folder)
        commands.append(
            Command(argv=_aiperf_argv(config, sweep, ratio, i, folder), mkdirs=(str(folder),))
        )
    return CommandPlan(
        benchmark_type="router",
        commands=tuple(commands),
        fold="router-prefix-ratios",
        artifacts=artifacts,
        rollup_config=RollupConfig(model=config.model_name, isl=sweep.isl, osl=sweep.osl),
        router=sweep,
    )


def _aiperf_argv(
    config: BenchRunConfig, sweep: RouterSweep, ratio: float, index: int, folder: Path
) -> tuple[str, ...]:
    prefix = int(sweep.isl * ratio)
    # the rest of the prompt is its own: isl in all (Dynamo's script takes int(isl x (1 - r)),
    # one token short whenever 1 - r is not exact in binary, e.g. 19 + 80 for 0.8 of 100)
    own = sweep.isl - prefix
    argv = aiperf_profile(
        config,
        "--isl",
        str(own),
        "--isl-stddev",
        str(round(own / 4)),
        "--osl",
        str(sweep.osl),
        "--osl-stddev",
        str(round(sweep.osl / 4)),
        "--extra-inputs",
        "ignore_eos:true",
        "--concurrency",
        str(sweep.concurrency),
        "--request-count",
        str(sweep.requests),
        "--num-dataset-entries",
        str(sweep.requests),
        "--random-seed",
        str(sweep.initial_seed + index),
        "--prefix-prompt-length",
        str(prefix),
        "--num-prefix-prompts",
        str(ROUTER_BENCH.num_prefix_prompts),
        "--artifact-dir",
        str(folder),
    )
    return argv + aiperf_extra_flags(config.benchmark.aiperf_args)


def _avg(doc: Mapping[str, Any], metric: str, ratio: float) -> float:
    value = doc.get(metric)
    avg = value.get("avg") if isinstance(value, dict) else None
    if not isinstance(avg, int | float):
        raise BenchDatasetError(
            f"router: aiperf's export for prefix ratio {ratio:g} has no {metric}.avg "
            "(is it aiperf 0.13 or newer?)"
        )
    return float(avg)


def router_summary(
    sweep: RouterSweep, exports: Mapping[int, Mapping[str, Any]]
) -> dict[str, Any] | None:
    """`results_summary.json`'s document (pure) from aiperf's export per ratio index: per ratio
    that finished, the mean TTFT (ms) and the output token throughput (tokens/s), with the
    sweep's settings; None when no ratio did. A ratio whose aiperf wrote no export is left out,
    as Dynamo's own script does, and named under `missing_prefix_ratios`."""
    done: list[float] = []
    ttft: list[float] = []
    throughput: list[float] = []
    missing: list[float] = []
    for i, ratio in enumerate(sweep.prefix_ratios):
        doc = exports.get(i)
        if doc is None:
            missing.append(ratio)
            continue
        done.append(ratio)
        ttft.append(_avg(doc, "time_to_first_token", ratio))
        throughput.append(_avg(doc, "output_token_throughput", ratio))
    if not done:
        return None
    summary: dict[str, Any] = {
        "prefix_ratios": done,
        "ttft_values": ttft,
        "throughput_values": throughput,
        "config": {
            "model": sweep.model,
            "tokenizer": sweep.tokenizer,
            "isl": sweep.isl,
            "osl": sweep.osl,
            "requests": sweep.requests,
            "concurrency": sweep.concurrency,
            "initial_seed": sweep.initial_seed,
            "num_prefix_prompts": ROUTER_BENCH.num_prefix_prompts,
        },
    }
    if missing:
        summary["missing_prefix_ratios"] = missing
    return summary


def encode_summary(summary: dict[str, Any]) -> bytes:
    return msgspec.json.format(msgspec.json.encode(summary), indent=2) + b"\n"
