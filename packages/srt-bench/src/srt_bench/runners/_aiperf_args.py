"""Flags shared by the runners that drive the `aiperf` CLI (pure)."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from srt_bench.config import BenchRunConfig

__all__ = ["aiperf_base", "aiperf_extra_flags", "aiperf_profile", "goodput_flag"]

DEFAULT_TTFT_THRESHOLD_MS = 2000
DEFAULT_ITL_THRESHOLD_MS = 25


def aiperf_base(config: BenchRunConfig) -> tuple[str, ...]:
    """`aiperf`, or `uvx --from <spec> aiperf` when `aiperf_package` pins a version."""
    spec = config.benchmark.aiperf_package
    if spec:
        return ("uvx", "--from", spec, "aiperf")
    return ("aiperf",)


def aiperf_profile(config: BenchRunConfig, *dataset: str) -> tuple[str, ...]:
    """`aiperf profile` against the run's endpoint over chat streaming, then the `dataset`
    flags, then the tokenizer when the run has one: what every aiperf runner starts with."""
    argv = (
        *aiperf_base(config),
        "profile",
        "--model",
        config.model_name,
        "--url",
        config.endpoint.rstrip("/"),
        "--endpoint-type",
        "chat",
        "--streaming",
        *dataset,
    )
    if config.tokenizer_path:
        argv += ("--tokenizer", config.tokenizer_path)
    return argv


def aiperf_extra_flags(args: Mapping[str, Any]) -> tuple[str, ...]:
    """`key: true` -> `--key`; `key: false` -> nothing; else `--key <value>` (sorted by key)."""
    out: list[str] = []
    for key in sorted(args):
        value = args[key]
        if value is True:
            out.append(f"--{key}")
        elif value is False or value is None:
            continue
        else:
            out.extend((f"--{key}", str(value)))
    return tuple(out)


def goodput_flag(config: BenchRunConfig) -> tuple[str, ...]:
    b = config.benchmark
    ttft = DEFAULT_TTFT_THRESHOLD_MS if b.ttft_threshold_ms is None else b.ttft_threshold_ms
    itl = DEFAULT_ITL_THRESHOLD_MS if b.itl_threshold_ms is None else b.itl_threshold_ms
    return ("--goodput", f"time_to_first_token:{ttft} inter_token_latency:{itl}")


def quote(argv: tuple[str, ...]) -> str:
    return shlex.join(argv)
