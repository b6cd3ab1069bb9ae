"""Capacity search: the highest concurrency (or request rate, `axis: request_rate`) whose
latencies meet the recipe's targets (`benchmark.capacity`,
docs/telemetry-and-bench.md#capacity-search).

`readings` (targets, percentiles and their confidence intervals), `search` (the next point, or
why to stop) and `outcome` (the answer and its confidence statement) are pure; `run` is the shell
that drives sa-bench phases and writes `capacity.json`.
"""

from __future__ import annotations

from srt_bench.capacity.outcome import build_capacity_result, format_point
from srt_bench.capacity.readings import (
    SearchSpec,
    build_readings,
    build_search_spec,
    percentile_interval,
)
from srt_bench.capacity.run import CAPACITY_FILE, build_point, read_capacity, run_capacity
from srt_bench.capacity.search import Bracket, Measure, Stop, build_bracket, decide

__all__ = [
    "CAPACITY_FILE",
    "Bracket",
    "Measure",
    "SearchSpec",
    "Stop",
    "build_bracket",
    "build_capacity_result",
    "build_point",
    "build_readings",
    "build_search_spec",
    "decide",
    "format_point",
    "percentile_interval",
    "read_capacity",
    "run_capacity",
]
