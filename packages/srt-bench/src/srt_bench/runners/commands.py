"""Command builders of the runners that start an external client (pure): custom, lm-eval,
sglang-bench, agentperf, mooncake-router and trace-replay (`router` has its own module)."""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping
from pathlib import Path

from srt_bench.config import BenchRunConfig, parse_concurrencies, parse_request_rate
from srt_bench.errors import BenchConfigError
from srt_bench.plans import Command, CommandPlan
from srt_bench.runners._aiperf_args import aiperf_extra_flags, aiperf_profile, goodput_flag
from srt_schema.registry import MOONCAKE_WORKLOADS
from srt_schema.rollup import RollupConfig

__all__ = [
    "build_agentperf",
    "build_custom",
    "build_lm_eval",
    "build_mooncake_router",
    "build_sglang_bench",
    "build_trace_replay",
]

SGLANG_BENCH_PROMPTS = 128
LM_EVAL_DEFAULT_CONCURRENCY = 256


def _require(value: object, field: str, benchmark_type: str, example: str) -> None:
    if value is None or value == "":
        raise BenchConfigError(
            f"$.benchmark.{field}: benchmark type {benchmark_type!r} needs {field}, e.g. {example}"
        )


def build_custom(config: BenchRunConfig, out_dir: Path) -> CommandPlan:
    """`bash -lc "<command>"` verbatim (no placeholder substitution), with `benchmark.env`."""
    b = config.benchmark
    _require(b.command, "command", "custom", "'bash /scripts/run.sh'")
    assert b.command is not None
    return CommandPlan(
        benchmark_type="custom",
        commands=(Command(argv=("bash", "-lc", b.command), env=dict(b.env), cwd=str(out_dir)),),
    )


def build_lm_eval(config: BenchRunConfig, out_dir: Path, environ: Mapping[str, str]) -> CommandPlan:
    """The lm-eval CLI against the OpenAI completions route; tasks from `LM_EVAL_TASKS`
    (default gsm8k), concurrency from `EVAL_CONC` (default 256), extra task YAMLs from
    `LM_EVAL_INCLUDE_PATH`."""
    tasks = environ.get("LM_EVAL_TASKS", "gsm8k")
    concurrency = environ.get("EVAL_CONC") or str(LM_EVAL_DEFAULT_CONCURRENCY)
    base = config.endpoint.rstrip("/")
    model_args = ",".join(
        [
            f"model={config.model_name}",
            f"base_url={base}/v1/completions",
            f"num_concurrent={concurrency}",
            "tokenized_requests=False",
            "max_retries=3",
        ]
        + ([f"tokenizer={config.tokenizer_path}"] if config.tokenizer_path else [])
    )
    results = out_dir / "eval_results"
    argv: tuple[str, ...] = (
        "lm_eval",
        "--model",
        "local-completions",
        "--model_args",
        model_args,
        "--tasks",
        tasks,
        "--output_path",
        str(results),
        "--log_samples",
    )
    if environ.get("LM_EVAL_INCLUDE_PATH"):
        # a folder of task YAMLs (local datasets: a node without the hub runs those)
        argv += ("--include_path", environ["LM_EVAL_INCLUDE_PATH"])
    return CommandPlan(
        benchmark_type="lm-eval",
        commands=(
            Command(
                argv=argv, env={"EVAL_CONCURRENT_REQUESTS": concurrency}, mkdirs=(str(results),)
            ),
        ),
    )


def build_sglang_bench(
    config: BenchRunConfig, out_dir: Path, environ: Mapping[str, str]
) -> CommandPlan:
    """`python -m sglang.bench_serving --backend sglang-oai`, one run per concurrency, each
    writing `sglang-bench/results_concurrency_<c>.jsonl` (folded into the rollup). The
    interpreter is `$SRT_SGLANG_PYTHON` when set (an environment with SGLang installed),
    else `python` (the container's)."""
    b = config.benchmark
    if b.isl is None or b.isl < 1 or b.osl is None or b.osl < 1:
        raise BenchConfigError("$.benchmark: sglang-bench needs isl and osl greater than 0")
    levels = parse_concurrencies(b.concurrencies)
    if not levels:
        raise BenchConfigError("$.benchmark.concurrencies: sglang-bench needs at least one level")
    rate = parse_request_rate(b.req_rate)
    python = environ.get("SRT_SGLANG_PYTHON") or "python"
    results = out_dir / "sglang-bench"
    artifacts = {c: str(results / f"results_concurrency_{c}.jsonl") for c in levels}
    commands = tuple(
        Command(
            argv=(
                python,
                "-m",
                "sglang.bench_serving",
                "--backend",
                "sglang-oai",
                "--base-url",
                config.endpoint.rstrip("/"),
                "--model",
                config.model_name,
                "--dataset-name",
                "random",
                "--random-input-len",
                str(b.isl),
                "--random-output-len",
                str(b.osl),
                "--random-range-ratio",
                "1",
                "--num-prompts",
                str(SGLANG_BENCH_PROMPTS),
                "--max-concurrency",
                str(c),
                "--request-rate",
                "inf" if math.isinf(rate) else str(rate),
                "--warmup-requests",
                "0",
                "--output-file",
                artifacts[c],
            )
            + (("--tokenizer", config.tokenizer_path) if config.tokenizer_path else ()),
            cwd=str(out_dir),
            mkdirs=(str(results),),
        )
        for c in levels
    )
    return CommandPlan(
        benchmark_type="sglang-bench",
        commands=commands,
        fold="sglang-per-concurrency",
        artifacts=artifacts,
    )


def build_agentperf(
    config: BenchRunConfig, out_dir: Path, environ: Mapping[str, str]
) -> CommandPlan:
    """The agentperf client checkout (`agentperf/run.py`, uv-managed); all levels at once."""
    b = config.benchmark
    _require(b.agentperf_client_dir, "agentperf_client_dir", "agentperf", "'/mnt/agentperf-client'")
    _require(b.agentperf_config, "agentperf_config", "agentperf", "'/mnt/workload.yaml'")
    assert b.agentperf_client_dir is not None and b.agentperf_config is not None
    levels = parse_concurrencies(b.concurrencies) or (
        (b.concurrency,) if b.concurrency is not None else ()
    )
    if not levels or any(c < 1 for c in levels):
        raise BenchConfigError(
            "$.benchmark: agentperf needs concurrency or concurrencies (positive integers)"
        )
    results = out_dir / "agentperf"
    client = Path(b.agentperf_client_dir)
    argv: tuple[str, ...] = (
        "uv",
        "run",
        "--project",
        str(client),
        "python",
        str(client / "agentperf" / "run.py"),
        "--config",
        b.agentperf_config,
        "--endpoint",
        config.endpoint.rstrip("/"),
        "--model",
        config.model_name,
        "--concurrencies",
        ",".join(str(c) for c in levels),
        "--output-dir",
        str(results),
    )
    if b.isl is not None:
        argv += ("--isl", str(b.isl))
    argv += tuple(shlex.split(environ.get("AGENTPERF_EXTRA_ARGS", "")))
    return CommandPlan(
        benchmark_type="agentperf",
        commands=(Command(argv=argv, env=dict(b.env), mkdirs=(str(results),)),),
    )


def _aiperf_common(config: BenchRunConfig) -> tuple[str, ...]:
    return aiperf_profile(config, "--custom-dataset-type", "mooncake_trace")


def _safe(name: str) -> str:
    return name.replace("/", "_")


def build_mooncake_router(config: BenchRunConfig, out_dir: Path, stamp: str) -> CommandPlan:
    """`aiperf profile` replaying a Mooncake trace on its own schedule. The trace is read from
    `dataset_path` (the downloaded trace when the plan fetched it: `srt_bench.fetch`), else
    `<datasets_dir>/<workload>_trace.jsonl`."""
    b = config.benchmark
    workload = b.mooncake_workload or "conversation"
    if workload not in MOONCAKE_WORKLOADS:
        raise BenchConfigError(
            f"$.benchmark.mooncake_workload: {workload!r} is not one of "
            + ", ".join(repr(w) for w in MOONCAKE_WORKLOADS)
        )
    if b.dataset_path:
        trace = b.dataset_path
    elif config.datasets_dir:
        trace = str(Path(config.datasets_dir) / f"{workload}_trace.jsonl")
    else:
        raise BenchConfigError(
            "$.benchmark: mooncake-router needs the trace file: set benchmark.dataset_path, "
            "datasets_dir or a fetch in the run config (srtctl plans the download of the "
            "published trace)"
        )
    artifact = out_dir / "artifacts" / f"{_safe(config.model_name)}_{workload}_{stamp}"
    argv = (
        *_aiperf_common(config),
        "--input-file",
        trace,
        "--fixed-schedule",
        *goodput_flag(config),
        "--warmup-request-count",
        "20",
        "--warmup-concurrency",
        "10",
        "--artifact-dir",
        str(artifact),
        *aiperf_extra_flags(b.aiperf_args),
    )
    return CommandPlan(
        benchmark_type="mooncake-router",
        commands=(Command(argv=argv, mkdirs=(str(artifact),)),),
        fold="aiperf-embed",
        artifacts={0: str(artifact)},
        rollup_config=RollupConfig(model=config.model_name, isl=None, osl=None, workload=workload),
    )


def build_trace_replay(config: BenchRunConfig, out_dir: Path, stamp: str) -> CommandPlan:
    """One `aiperf profile` per concurrency over `trace_file`, after a 5-request warmup."""
    b = config.benchmark
    _require(b.trace_file, "trace_file", "trace-replay", "'/data/trace.jsonl'")
    assert b.trace_file is not None
    levels = parse_concurrencies(b.concurrencies)
    if not levels:
        raise BenchConfigError("$.benchmark.concurrencies: trace-replay needs at least one level")
    common = (
        *_aiperf_common(config),
        "--input-file",
        b.trace_file,
        "--extra-inputs",
        "ignore_eos:true",
        "--random-seed",
        "42",
        "--server-metrics-formats",
        "json",
        "jsonl",
    )
    warm_dir = out_dir / "artifacts" / "warmup"
    commands = [
        Command(
            argv=(
                *common,
                "--concurrency",
                "1",
                "--request-count",
                "5",
                "--artifact-dir",
                str(warm_dir),
            ),
            mkdirs=(str(warm_dir),),
        )
    ]
    artifacts: dict[int, str] = {}
    for c in levels:
        artifact = out_dir / "artifacts" / f"{_safe(config.model_name)}_trace_c{c}_{stamp}"
        artifacts[c] = str(artifact)
        commands.append(
            Command(
                argv=(
                    *common,
                    "--concurrency",
                    str(c),
                    *goodput_flag(config),
                    "--artifact-dir",
                    str(artifact),
                    *aiperf_extra_flags(b.aiperf_args),
                ),
                mkdirs=(str(artifact),),
            )
        )
    return CommandPlan(
        benchmark_type="trace-replay",
        commands=tuple(commands),
        fold="aiperf-per-concurrency",
        artifacts=artifacts,
    )
