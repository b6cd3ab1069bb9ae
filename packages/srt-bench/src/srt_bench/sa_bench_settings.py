"""sa-bench settings resolved from the recipe's `benchmark:` block, with defaults applied (pure)."""

from __future__ import annotations

import math
from typing import assert_never

import msgspec

from srt_bench.client import Api
from srt_bench.config import (
    DEFAULT_NUM_PROMPTS_MULT,
    DEFAULT_NUM_WARMUP_MULT,
    DEFAULT_RANDOM_RANGE_RATIO,
    BenchRunConfig,
    check_in_range,
    parse_concurrencies,
    parse_request_rate,
)
from srt_bench.errors import BenchConfigError
from srt_bench.stats import Goodput
from srt_bench.workloads.config import (
    MultiTurn,
    SharedPrefix,
    TraceReplay,
    Workload,
    workload_label,
)
from srt_schema.registry import (
    ROUTER_BENCH_FRONTEND,
    SA_BENCH_DATASETS,
    SaBenchDataset,
    is_local_tokenizer,
    is_tokenizer_class,
)

__all__ = ["SaBenchSettings", "SlowDown", "build_sa_bench_settings", "result_dir_name"]

#: The frontend behind which SGLang `/slow_down` applies (Q2).
SLOW_DOWN_FRONTEND = ROUTER_BENCH_FRONTEND


class SlowDown(msgspec.Struct, frozen=True, kw_only=True):
    urls: tuple[str, ...]
    sleep_time: float
    wait_time: float


class SaBenchSettings(msgspec.Struct, frozen=True, kw_only=True):
    #: Empty for a capacity search (`benchmark.capacity` chooses them).
    concurrencies: tuple[int, ...]
    dataset: SaBenchDataset
    dataset_path: str | None
    #: `tokenizer.json` (or the folder holding it) prompts are built and counted with:
    #: `benchmark.custom_tokenizer` when it is a path, else the run config's `tokenizer_path`
    #: (the model folder, or `hf:<repo>`: fetched from the hub, srt_bench.hub).
    tokenizer_path: str | None
    #: `benchmark.custom_tokenizer` when it is a class path (`module.ClassName`, built with
    #: `from_pretrained(<tokenizer_path's folder>)`, srt_bench.tokenizer).
    tokenizer_class: str | None
    isl: int | None
    osl: int | None
    range_ratio: float
    request_rate: float
    num_prompts_mult: int
    num_warmup_mult: int
    api: Api
    reuse_connections: bool
    goodput: Goodput
    slow_down: SlowDown | None
    #: Why a configured slow_down was ignored (the CLI logs it), or None.
    slow_down_ignored: str | None
    #: The run config's workload (None: independent random or custom prompts).
    workload: Workload | None = None


def result_dir_name(settings: SaBenchSettings) -> str:
    w = settings.workload
    if isinstance(w, TraceReplay):
        return f"sa-bench_trace-replay_{w.path.rstrip('/').rsplit('/', 1)[-1]}"
    if w is not None:
        return f"sa-bench_{workload_label(w)}_isl_{settings.isl}_osl_{settings.osl}"
    if settings.dataset == "custom":
        assert settings.dataset_path is not None
        stem = settings.dataset_path.rstrip("/").rsplit("/", 1)[-1]
        return f"sa-bench_custom_{stem}"
    return f"sa-bench_isl_{settings.isl}_osl_{settings.osl}"


def _slow_down(config: BenchRunConfig) -> tuple[SlowDown | None, str | None]:
    b = config.benchmark
    sleep, wait = b.slow_down_sleep_time, b.slow_down_wait_time
    if sleep is None and wait is None:
        return None, None
    if not (sleep is not None and sleep > 0 and wait is not None and wait > 0):
        return None, (
            "slow_down ignored: set both benchmark.slow_down_sleep_time and "
            "benchmark.slow_down_wait_time to positive numbers"
        )
    if config.frontend_type != SLOW_DOWN_FRONTEND:
        return None, (
            f"slow_down ignored: it needs frontend.type {SLOW_DOWN_FRONTEND!r}, "
            f"got {config.frontend_type!r}"
        )
    if not config.slow_down_urls:
        return None, "slow_down ignored: the plan lists no decode worker leader (slow_down_urls)"
    return SlowDown(urls=config.slow_down_urls, sleep_time=sleep, wait_time=wait), None


def build_sa_bench_settings(config: BenchRunConfig) -> SaBenchSettings:
    b = config.benchmark
    if config.total_gpus < 1:
        raise BenchConfigError(
            f"$.total_gpus: sa-bench reports per-GPU throughput and needs total_gpus >= 1, "
            f"got {config.total_gpus}"
        )
    concurrencies = parse_concurrencies(b.concurrencies)
    if b.capacity is not None and concurrencies:
        raise BenchConfigError(
            "$.benchmark.concurrencies: benchmark.capacity chooses the concurrencies it measures; "
            "drop benchmark.concurrencies or benchmark.capacity"
        )
    if b.capacity is not None and b.capacity.axis == "request_rate":
        if not math.isinf(parse_request_rate(b.req_rate)):
            raise BenchConfigError(
                "$.benchmark.req_rate: axis request_rate chooses each point's request rate; "
                "drop benchmark.req_rate"
            )
        if config.workload is not None:
            raise BenchConfigError(
                "$.benchmark.workload: a capacity search on axis request_rate sends "
                "independent prompts only; drop benchmark.workload or set axis: concurrency"
            )
        if b.num_prompts_mult is not None:
            raise BenchConfigError(
                "$.benchmark.num_prompts_mult: a point of axis request_rate measures "
                "ceil(rate x seconds_per_point) requests; drop num_prompts_mult and set "
                "capacity.seconds_per_point"
            )
    if not concurrencies and b.capacity is None:
        raise BenchConfigError(
            "$.benchmark.concurrencies: sa-bench needs at least one concurrency, e.g. [4, 8]"
        )
    custom = b.custom_tokenizer
    if custom is not None and not (is_local_tokenizer(custom) or is_tokenizer_class(custom)):
        raise BenchConfigError(
            f"$.benchmark.custom_tokenizer: {custom!r} is neither a local tokenizer nor a "
            "tokenizer class; set an absolute path to a folder holding tokenizer.json (or to the "
            "file), or a class path module.ClassName"
        )
    local_custom = custom if custom is not None and is_local_tokenizer(custom) else None
    dataset_name = b.dataset_name or "random"
    if dataset_name not in SA_BENCH_DATASETS:
        raise BenchConfigError(
            f"$.benchmark.dataset_name: {dataset_name!r} is not a dataset sa-bench reads; use "
            + " or ".join(repr(d) for d in SA_BENCH_DATASETS)
        )
    dataset: SaBenchDataset = "custom" if dataset_name == "custom" else "random"
    if dataset == "custom" and not b.dataset_path:
        raise BenchConfigError(
            "$.benchmark.dataset_path: dataset_name 'custom' needs a dataset_path"
        )
    isl = _workload_isl(config, dataset)
    if dataset == "random" and config.workload is None and (b.isl is None or b.osl is None):
        raise BenchConfigError(
            "$.benchmark: sa-bench needs isl and osl (or dataset_name: custom with dataset_path)"
        )
    check_in_range("isl", b.isl)
    check_in_range("osl", b.osl)
    ratio = DEFAULT_RANDOM_RANGE_RATIO if b.random_range_ratio is None else b.random_range_ratio
    check_in_range("random_range_ratio", ratio)
    prompts_mult = DEFAULT_NUM_PROMPTS_MULT if b.num_prompts_mult is None else b.num_prompts_mult
    warmup_mult = DEFAULT_NUM_WARMUP_MULT if b.num_warmup_mult is None else b.num_warmup_mult
    check_in_range("num_prompts_mult", prompts_mult)
    check_in_range("num_warmup_mult", warmup_mult)
    auto: Api = "chat" if b.use_chat_template else "completions"
    api: Api = auto if config.api == "auto" else config.api
    slow_down, ignored = _slow_down(config)
    return SaBenchSettings(
        concurrencies=concurrencies,
        dataset=dataset,
        dataset_path=b.dataset_path,
        tokenizer_path=local_custom or config.tokenizer_path,
        tokenizer_class=None if custom is None or local_custom else custom,
        isl=isl,
        osl=None if isinstance(config.workload, TraceReplay) else b.osl,
        range_ratio=ratio,
        request_rate=parse_request_rate(b.req_rate),
        num_prompts_mult=prompts_mult,
        num_warmup_mult=warmup_mult,
        api=api,
        reuse_connections=b.reuse_http_connections,
        goodput=Goodput(
            ttft_ms=None if b.ttft_threshold_ms is None else float(b.ttft_threshold_ms),
            tpot_ms=None if b.itl_threshold_ms is None else float(b.itl_threshold_ms),
        ),
        slow_down=slow_down,
        slow_down_ignored=ignored,
        workload=config.workload,
    )


def _workload_isl(config: BenchRunConfig, dataset: SaBenchDataset) -> int | None:
    """The input length a workload's results report (checks what the workload needs)."""
    w, b = config.workload, config.benchmark
    if w is None:
        return b.isl
    kind = workload_label(w)
    if dataset == "custom":
        raise BenchConfigError(
            f"$.benchmark.workload: a {kind} workload builds its own prompts; drop dataset_name "
            "'custom' or the workload"
        )
    if not config.tokenizer_path and not (
        b.custom_tokenizer and is_local_tokenizer(b.custom_tokenizer)
    ):
        raise BenchConfigError(
            f"$.tokenizer_path: a {kind} workload needs the model's tokenizer to build prompts"
        )
    match w:
        case MultiTurn():
            if b.isl is None or b.osl is None:
                raise BenchConfigError(
                    "$.benchmark: a multi-turn workload needs isl (tokens of each new user text) "
                    "and osl (tokens of each answer)"
                )
            return b.isl
        case SharedPrefix():
            if b.osl is None:
                raise BenchConfigError("$.benchmark.osl: a shared-prefix workload needs osl")
            return w.prefix_tokens + w.suffix_tokens
        case TraceReplay():
            return None
        case _:
            assert_never(w)
