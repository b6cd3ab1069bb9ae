"""The runner configuration (`bench.json`), decoded once at the edge into frozen structs.

The planner emits one `BenchRunConfig` per job: the recipe's `benchmark:` block verbatim plus what
the runner cannot know by itself (endpoint, model name, tokenizer folder, GPU counts). After
`read_run_config` nothing touches raw dicts.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Literal

import msgspec

from srt_bench.errors import BenchConfigError
from srt_bench.profile_control import ProfilingControl
from srt_bench.workloads.config import Workload, check_workload
from srt_schema.fetch import DatasetFetch
from srt_schema.recipe import BenchmarkConfig
from srt_schema.registry import BENCHMARK_BOUNDS

__all__ = [
    "DEFAULT_NUM_PROMPTS_MULT",
    "DEFAULT_NUM_WARMUP_MULT",
    "DEFAULT_RANDOM_RANGE_RATIO",
    "WARMUP_REQUEST_RATE",
    "BenchRunConfig",
    "check_in_range",
    "decode_run_config",
    "parse_concurrencies",
    "parse_request_rate",
    "read_run_config",
    "with_local_tokenizer",
]


def check_in_range(name: str, value: float | None) -> None:
    """The range srtctl validate checks (srt_schema.registry.BENCHMARK_BOUNDS), kept here as a
    defensive check of a hand-written run config."""
    bound = BENCHMARK_BOUNDS[name]
    if value is not None and not bound.allows(value):
        raise BenchConfigError(
            f"$.benchmark.{name}: {value} is out of range; {name} must be {bound.describe()}"
        )


DEFAULT_RANDOM_RANGE_RATIO = 0.8
DEFAULT_NUM_PROMPTS_MULT = 10
DEFAULT_NUM_WARMUP_MULT = 2
#: Warmup arrival rate in requests/s (Q17: a named setting defaulting to 250).
WARMUP_REQUEST_RATE = 250.0


class BenchRunConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Everything one `srt-bench run` needs; written by the planner as JSON."""

    #: The recipe's `benchmark:` block, unchanged.
    benchmark: BenchmarkConfig
    #: Base URL of the OpenAI-compatible frontend, e.g. `http://10.0.0.1:8000`.
    endpoint: str
    #: The served model name sent in every request.
    model_name: str
    #: Folder holding `tokenizer.json` (the model folder); None when the type needs no tokenizer.
    tokenizer_path: str | None = None
    #: With stand-in engines, for a type that takes no `custom_tokenizer`: the stand-in model,
    #: used instead of `tokenizer_path` when that is not a folder or file on this node (a
    #: recipe's `/models/...` that only its cluster has). None: `tokenizer_path` as given.
    stand_in_tokenizer: str | None = None
    #: GPUs serving the model (per-GPU throughput, the rollup's GPU columns); 0 when no GPU
    #: worker serves (e.g. a `custom` benchmark against service pools); sa-bench needs >= 1.
    total_gpus: int
    #: GPUs of prefill workers in a disaggregated deployment (None: aggregated).
    prefill_gpus: int | None = None
    #: GPUs of decode workers in a disaggregated deployment (None: aggregated).
    decode_gpus: int | None = None
    #: Where results go (the job's log dir); the CLI's `--out` overrides it.
    output_dir: str = "."
    #: The job name, the rollup CSV's `Config` column (None: the model name).
    job_name: str | None = None
    #: `frontend.type` of the recipe (SGLang `/slow_down` only applies behind `sglang-router`).
    frontend_type: str | None = None
    #: `http://<decode-leader>:<port>` of every decode worker leader, for SGLang `/slow_down`.
    slow_down_urls: tuple[str, ...] = ()
    #: Folder holding accuracy datasets when `benchmark.dataset_path` is unset.
    datasets_dir: str | None = None
    #: Files downloaded (or found in the shared cache) before the client starts; each replaces
    #: the `benchmark` field it names by the local file (`srt_bench.fetch`).
    fetch: tuple[DatasetFetch, ...] = ()
    #: Percentiles reported for every latency metric.
    percentiles: tuple[float, ...] = (50.0, 90.0, 99.0)
    #: Seed of the synthetic prompt generator and the Poisson arrival process.
    seed: int = 0
    #: Seconds one request may take before it counts as failed.
    request_timeout_seconds: float = 6 * 3600.0
    #: Which OpenAI route sa-bench drives; `auto` = chat when `use_chat_template`, else completions.
    api: Literal["auto", "chat", "completions"] = "auto"
    #: What the benchmark side of profiling does: the start/stop requests of each profiled
    #: worker and the measured-workload markers (`srt_bench.profile_control`). None: nothing.
    profiling: ProfilingControl | None = None

    @property
    def workload(self) -> Workload | None:
        """sa-bench only: the recipe's `benchmark.workload` (`multi-turn`, `shared-prefix`,
        `trace-replay`; `srt_bench.workloads.config`). None: independent random or custom
        prompts."""
        return self.benchmark.workload


def decode_run_config(data: bytes, *, source: str = "bench.json") -> BenchRunConfig:
    """Decode and check a run configuration; errors name the file and the JSON path."""
    try:
        config = msgspec.json.decode(data, type=BenchRunConfig)
    except msgspec.ValidationError as exc:
        raise BenchConfigError(f"{source}: {exc}") from exc
    except msgspec.DecodeError as exc:
        raise BenchConfigError(f"{source}: not valid JSON: {exc}") from exc
    if config.total_gpus < 0:
        raise BenchConfigError(f"{source}: $.total_gpus: must be >= 0, got {config.total_gpus}")
    for p in config.percentiles:
        if not 0.0 < p <= 100.0:
            raise BenchConfigError(f"{source}: $.percentiles: {p} is not in (0, 100]")
    if config.workload is not None:
        try:
            check_workload(config.workload)
        except BenchConfigError as exc:
            raise BenchConfigError(f"{source}: {exc}") from exc
    return config


def with_local_tokenizer(config: BenchRunConfig) -> BenchRunConfig:
    """``config`` with the stand-in model as its tokenizer when it names one and
    ``tokenizer_path`` is not on this node (:attr:`BenchRunConfig.stand_in_tokenizer`)."""
    fallback = config.stand_in_tokenizer
    current = config.tokenizer_path
    if fallback is None or (current is not None and Path(current).exists()):
        return config
    return msgspec.structs.replace(config, tokenizer_path=fallback)


def read_run_config(path: Path) -> BenchRunConfig:
    """Read `bench.json` from disk."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BenchConfigError(f"cannot read the run config {path}: {exc.strerror}") from exc
    return with_local_tokenizer(decode_run_config(data, source=str(path)))


def parse_concurrencies(value: tuple[int, ...] | str | None) -> tuple[int, ...]:
    """`[4, 8]` or `"4x8"` -> `(4, 8)`, order kept, no dedup; every value must be positive."""
    if value is None:
        return ()
    if isinstance(value, str):
        parts = [p.strip() for p in value.split("x")]
        try:
            values = tuple(int(p) for p in parts)
        except ValueError as exc:
            raise BenchConfigError(
                f"$.benchmark.concurrencies: {value!r} is not an x-separated list of integers "
                "(e.g. '4x8x16')"
            ) from exc
    else:
        values = tuple(value)
    for v in values:
        if v < 1:
            raise BenchConfigError(f"$.benchmark.concurrencies: {v} is not a positive integer")
    return values


def parse_request_rate(value: str | int | None) -> float:
    """`"inf"`/None -> infinity, else a positive number of requests per second."""
    if value is None:
        return math.inf
    if isinstance(value, int):
        rate = float(value)
    else:
        text = value.strip().lower()
        if text in {"inf", "infinity"}:
            return math.inf
        try:
            rate = float(text)
        except ValueError as exc:
            raise BenchConfigError(
                f"$.benchmark.req_rate: {value!r} is neither a number nor 'inf'"
            ) from exc
    if not rate > 0 or math.isnan(rate):
        raise BenchConfigError(f"$.benchmark.req_rate: {value!r} must be positive or 'inf'")
    return rate
