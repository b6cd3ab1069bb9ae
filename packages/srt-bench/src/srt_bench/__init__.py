"""srt_bench: benchmark runners (the sa-bench client, accuracy evaluators, external-client
adapters) and rollup files. The runtime starts `srt-bench run --config bench.json`."""

from __future__ import annotations

from srt_bench.config import BenchRunConfig, decode_run_config, read_run_config
from srt_bench.errors import (
    BenchConfigError,
    BenchDatasetError,
    BenchError,
    BenchGateError,
    BenchRequestError,
)
from srt_bench.execute import run_plan
from srt_bench.plans import Plan
from srt_bench.runners import BuildContext, build_plan, registered_types

__all__ = [
    "BenchConfigError",
    "BenchDatasetError",
    "BenchError",
    "BenchGateError",
    "BenchRequestError",
    "BenchRunConfig",
    "BuildContext",
    "Plan",
    "build_plan",
    "decode_run_config",
    "read_run_config",
    "registered_types",
    "run_plan",
]
