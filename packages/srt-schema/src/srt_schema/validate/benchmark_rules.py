"""Rules for ``benchmark`` and the remaining blocks (docs/recipes.md#benchmark-rules)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import msgspec

from srt_schema.errors import Issue
from srt_schema.fetch import is_url, split_pin
from srt_schema.formatting import unknown_placeholders
from srt_schema.recipe import BenchmarkConfig
from srt_schema.registry import (
    ACCURACY_EVALS,
    BENCHMARK_FIELDS,
    BENCHMARK_SHARED_FIELDS,
    FRONTENDS,
    MOONCAKE_WORKLOADS,
    ROUTER_BENCH_FRONTEND,
    SA_BENCH_DATASETS,
    canonical_frontend,
    is_local_tokenizer,
    is_tokenizer_class,
)
from srt_schema.router_bench import parse_prefix_ratios
from srt_schema.served import HF_MODEL_PREFIX, parse_hf_model
from srt_schema.structural import join_path
from srt_schema.text_bounds import MAX_CONCURRENCY_LEVELS
from srt_schema.validate.context import Context

__all__ = ["RULES", "parse_concurrencies"]

_DEFAULTS: dict[str, Any] = msgspec.to_builtins(BenchmarkConfig())
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def parse_concurrencies(value: tuple[int, ...] | str | None) -> tuple[int, ...] | None:
    """``[4, 8]`` or ``"4x8"`` -> ``(4, 8)``; None stays None. Raises ValueError when malformed."""
    if value is None:
        return None
    if isinstance(value, str):
        parts = value.split("x")
        if not all(p.strip().isdigit() for p in parts):
            raise ValueError(value)
        return tuple(int(p) for p in parts)
    return tuple(value)


def benchmark(ctx: Context) -> Iterator[Issue]:
    bench = ctx.recipe.benchmark
    fields = BENCHMARK_FIELDS.get(bench.type)
    if fields is None:
        yield ctx.issue(
            "$.benchmark.type",
            f"unknown benchmark.type '{bench.type}'; available: "
            f"{', '.join(sorted(BENCHMARK_FIELDS))}",
        )
        return
    values: dict[str, Any] = msgspec.to_builtins(bench)
    accepted = fields | BENCHMARK_SHARED_FIELDS
    unused = sorted(k for k, v in values.items() if k not in accepted and v != _DEFAULTS[k])
    if unused:
        yield ctx.issue(
            f"$.benchmark.{unused[0]}",
            f"benchmark.type '{bench.type}' does not use {', '.join(unused)}; fields it accepts: "
            f"{', '.join(sorted(accepted))}",
        )
    # lengths, counts and ratios: registry.FIELD_BOUNDS (the structural check)
    if isinstance(bench.req_rate, str) and bench.req_rate != "inf":
        try:
            rate: float | None = float(bench.req_rate)
        except ValueError:
            yield ctx.issue(
                "$.benchmark.req_rate", f"'{bench.req_rate}' is not a rate; use a number or inf"
            )
            rate = None
    else:
        rate = None if bench.req_rate in (None, "inf") else float(bench.req_rate)
    if rate is not None and not rate > 0:
        yield ctx.issue(
            "$.benchmark.req_rate",
            f"{bench.req_rate} is out of range; req_rate must be a number > 0 or inf",
        )


def concurrencies(ctx: Context) -> Iterator[Issue]:
    """Levels parse, are positive, and repeat only when no power window is keyed by them."""
    bench = ctx.recipe.benchmark
    try:
        conc = parse_concurrencies(bench.concurrencies)
    except ValueError:
        yield ctx.issue(
            "$.benchmark.concurrencies",
            f"'{bench.concurrencies}' is not a concurrency list; write [4, 8] or \"4x8\"",
        )
        return
    if conc is None:
        return
    if not conc or any(c < 1 for c in conc):
        yield ctx.issue(
            "$.benchmark.concurrencies",
            f"{list(conc)} is not allowed; concurrencies must be a non-empty list of positive "
            "integers",
        )
        return
    if len(conc) > MAX_CONCURRENCY_LEVELS:
        yield ctx.issue(
            "$.benchmark.concurrencies",
            f"{len(conc)} concurrency levels is too many; write at most {MAX_CONCURRENCY_LEVELS} "
            "(each level is one benchmark run)",
        )
        return
    repeated = sorted({c for c in conc if conc.count(c) > 1})
    if repeated and ctx.recipe.telemetry.enabled:
        yield ctx.issue(
            "$.benchmark.concurrencies",
            f"{list(conc)} repeats {', '.join(map(str, repeated))}; with telemetry.enabled each "
            "power window is keyed by its concurrency, so every level must be unique: drop the "
            "repeat or set telemetry.enabled: false",
        )


def _need(ctx: Context, kind: str, missing: list[str], example: str) -> Iterator[Issue]:
    if missing:
        yield ctx.issue(
            f"$.benchmark.{missing[0]}",
            f"benchmark.type '{kind}' needs {', '.join(missing)}; {example}",
        )


def runner_inputs(ctx: Context) -> Iterator[Issue]:
    """What each runner refuses at run time when it is missing, refused here instead."""
    bench = ctx.recipe.benchmark
    kind = bench.type
    levels = bench.concurrencies is not None
    if kind == "custom" and not bench.command:
        yield ctx.issue("$.benchmark.command", "a custom benchmark needs `command:`")
    elif kind == "sa-bench":
        yield from _sa_bench(ctx)
        yield from _slow_down(ctx)
    elif kind == "sglang-bench":
        missing = [k for k, v in (("isl", bench.isl), ("osl", bench.osl)) if v is None]
        missing += [] if levels else ["concurrencies"]
        yield from _need(ctx, kind, missing, "e.g. isl: 1024, osl: 1024, concurrencies: [4, 8]")
    elif kind == "trace-replay":
        missing = [] if bench.trace_file else ["trace_file"]
        missing += [] if levels else ["concurrencies"]
        yield from _need(
            ctx, kind, missing, "e.g. trace_file: /data/trace.jsonl, concurrencies: [4, 8]"
        )
    elif kind == "agentperf":
        missing = [
            k
            for k, v in (
                ("agentperf_client_dir", bench.agentperf_client_dir),
                ("agentperf_config", bench.agentperf_config),
            )
            if not v
        ]
        if not levels and bench.concurrency is None:
            missing.append("concurrencies")
        yield from _need(
            ctx,
            kind,
            missing,
            "e.g. agentperf_client_dir: /mnt/agentperf-client, agentperf_config: "
            "/mnt/workload.yaml, concurrencies: [4, 8] (or concurrency: 4)",
        )
    elif kind in ACCURACY_EVALS:
        yield from _offline_eval(ctx, kind)
    elif kind == "mooncake-router":
        workload = bench.mooncake_workload
        if workload is not None and workload not in MOONCAKE_WORKLOADS:
            yield ctx.issue(
                "$.benchmark.mooncake_workload",
                f"'{workload}' is not a Mooncake workload; use one of "
                f"{', '.join(MOONCAKE_WORKLOADS)}",
            )
        # without dataset_path the job downloads the published trace (srt_planner.datasets)
    elif kind == "router":
        frontend = ctx.recipe.frontend.type
        canonical = canonical_frontend(frontend) if frontend in FRONTENDS else frontend
        if canonical != ROUTER_BENCH_FRONTEND:
            yield ctx.issue(
                "$.benchmark.type",
                f"benchmark.type 'router' measures the SGLang router's prefix caching and needs "
                f"frontend.type '{ROUTER_BENCH_FRONTEND}', got '{frontend}'; set frontend.type: "
                f"{ROUTER_BENCH_FRONTEND} or pick another benchmark.type",
            )
        try:
            parse_prefix_ratios(bench.prefix_ratios)
        except ValueError as exc:
            yield ctx.issue("$.benchmark.prefix_ratios", str(exc))


def remote_files(ctx: Context) -> Iterator[Issue]:
    """A file given as an http(s) URL is downloaded by the job only where the runner reads it
    (mooncake-router's dataset_path, trace-replay's trace_file); a #sha256= pin must be one."""
    bench = ctx.recipe.benchmark
    kind = bench.type
    if kind != "mooncake-router" and is_url(bench.dataset_path):
        yield ctx.issue(
            "$.benchmark.dataset_path",
            f"'{bench.dataset_path}' is a URL, and benchmark.type '{kind}' reads dataset_path "
            "as a file (only mooncake-router downloads it); download the file and set "
            "dataset_path to its path inside the container",
        )
    for name in ("dataset_path", "trace_file"):
        value = getattr(bench, name)
        if is_url(value):
            try:
                split_pin(value)
            except ValueError as exc:
                yield ctx.issue(
                    f"$.benchmark.{name}",
                    f"'{value}': {exc}; write #sha256=<the sha256 of the file> (the lock's "
                    "lock.datasets[].pinned_url) or drop the fragment",
                )


#: Variables that switch a job offline (Hugging Face's own; srt_bench.evals.sources reads them).
OFFLINE_VARIABLES = ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE")
#: Where an offline job finds an eval's dataset when benchmark.dataset_path is unset.
OFFLINE_DATASET_FOLDERS = ("SRT_DATASETS_DIR", "HF_DATASETS_CACHE", "HF_HOME")


def _offline_eval(ctx: Context, kind: str) -> Iterator[Issue]:
    """An accuracy eval fetches its dataset in the job unless the recipe's environment switches
    it offline; then it must say where the file is (benchmark.dataset_path or a folder)."""
    bench = ctx.recipe.benchmark
    env = ctx.recipe.environment
    offline = [
        k for k in OFFLINE_VARIABLES if env.get(k, "").strip().lower() in {"1", "true", "yes", "on"}
    ]
    if not offline or bench.dataset_path:
        return
    if any(env.get(k) for k in OFFLINE_DATASET_FOLDERS):
        return
    yield ctx.issue(
        "$.benchmark.dataset_path",
        f"benchmark.type '{kind}' cannot find its dataset: environment {offline[0]}="
        f"{env[offline[0]]} forbids the download, benchmark.dataset_path is unset and the "
        "environment names no folder to look in (SRT_DATASETS_DIR, HF_DATASETS_CACHE, "
        "HF_HOME; the default cache ~/.cache/huggingface/datasets is the node's, not known "
        f"here); set benchmark.dataset_path to the {kind} file inside the container, set "
        f"environment.SRT_DATASETS_DIR to a mounted folder holding {kind}.jsonl, or drop "
        f"{offline[0]}",
    )


def _slow_down(ctx: Context) -> Iterator[Issue]:
    """SGLang ``/slow_down`` applies only with both times > 0, behind the SGLang router, to
    decode workers; srt-bench otherwise ignores it, so validate refuses it instead."""
    bench = ctx.recipe.benchmark
    sleep, wait = bench.slow_down_sleep_time, bench.slow_down_wait_time
    if sleep is None and wait is None:
        return
    for name, value in (("slow_down_sleep_time", sleep), ("slow_down_wait_time", wait)):
        if value is None or not value > 0:
            shown = "unset" if value is None else f"{value:g}"
            yield ctx.issue(
                f"$.benchmark.{name}",
                f"{name} is {shown}; SGLang /slow_down needs both slow_down_sleep_time and "
                "slow_down_wait_time > 0 (seconds): set both or drop both",
            )
            return
    frontend = ctx.recipe.frontend.type
    canonical = canonical_frontend(frontend) if frontend in FRONTENDS else frontend
    if canonical != ROUTER_BENCH_FRONTEND or not ctx.disaggregated:
        yield ctx.issue(
            "$.benchmark.slow_down_sleep_time",
            f"SGLang /slow_down is sent to the decode workers behind frontend.type "
            f"'{ROUTER_BENCH_FRONTEND}' (a prefill/decode recipe); this recipe has frontend.type "
            f"'{frontend}'{'' if ctx.disaggregated else ' and no decode role'}: drop "
            "slow_down_sleep_time and slow_down_wait_time",
        )


def _sa_bench(ctx: Context) -> Iterator[Issue]:
    bench = ctx.recipe.benchmark
    dataset = bench.dataset_name or "random"
    if dataset not in SA_BENCH_DATASETS:
        yield ctx.issue(
            "$.benchmark.dataset_name",
            f"'{dataset}' is not a dataset sa-bench reads; use 'random' (synthetic prompts of "
            "isl/osl tokens) or 'custom' (a JSON Lines file of prompts in dataset_path)",
        )
        return
    if dataset == "custom":
        missing = [] if bench.dataset_path else ["dataset_path"]
        example = "e.g. dataset_path: /data/prompts.jsonl, concurrencies: [4, 8]"
    elif bench.workload is None:
        missing = [k for k, v in (("isl", bench.isl), ("osl", bench.osl)) if v is None]
        example = "e.g. isl: 1024, osl: 1024, concurrencies: [4, 8]"
    else:  # what a workload needs: capacity_rules.workload
        missing, example = [], "e.g. concurrencies: [4, 8]"
    # a capacity search chooses its own concurrencies (capacity_rules.capacity)
    levels = bench.concurrencies is not None or bench.capacity is not None
    missing += [] if levels else ["concurrencies"]
    yield from _need(ctx, "sa-bench", missing, example)
    tokenizer = bench.custom_tokenizer
    if tokenizer is not None and not (
        is_local_tokenizer(tokenizer) or is_tokenizer_class(tokenizer)
    ):
        yield ctx.issue(
            "$.benchmark.custom_tokenizer",
            f"'{tokenizer}' is neither a local tokenizer nor a tokenizer class: set an absolute "
            "path to a folder holding tokenizer.json (or to the file), or a class path "
            "'module.ClassName' importable in the benchmark's environment (srt-bench calls its "
            "from_pretrained(<model folder>)), or unset custom_tokenizer to use the model's own",
        )
    # An hf: model's tokenizer is fetched from the hub in the job (srt_bench.hub).


def misc(ctx: Context) -> Iterator[Issue]:
    model = ctx.recipe.model.path
    if model.startswith(HF_MODEL_PREFIX):
        try:
            repo, revision = parse_hf_model(model)
        except ValueError as exc:
            yield ctx.issue("$.model.path", str(exc))
        else:
            if revision is not None:
                yield ctx.issue(
                    "$.model.path",
                    f"'{model}': the engines are given the repository id only, so a revision "
                    f"after '@' would hold for the benchmark's tokenizer and not for the "
                    f"weights; use hf:{repo} (the job pins the commit it resolved in "
                    "recipe.lock.yaml as lock.hf_model.commit), or download that revision and "
                    "set model.path to the folder",
                )
    host = ctx.recipe.host_setup
    for key, entries in (("commands", host.commands), ("teardown", host.teardown)):
        for i, entry in enumerate(entries):
            if not entry.strip():
                yield ctx.issue(f"$.host_setup.{key}[{i}]", f"host_setup.{key}[{i}] is empty")
    post = ctx.recipe.post_eval
    for i, name in enumerate(post.passthrough_env):
        if not _IDENTIFIER.match(name):
            yield ctx.issue(
                f"$.post_eval.passthrough_env[{i}]",
                f"'{name}' is not an environment variable name",
            )
    if post.command is not None and not post.command:
        yield ctx.issue("$.post_eval.command", "must not be empty; drop the key")
    for i, pattern in enumerate(ctx.recipe.health_check.extra_fatal_log_patterns):
        try:
            re.compile(pattern)
        except re.error as exc:
            yield ctx.issue(
                f"$.health_check.extra_fatal_log_patterns[{i}]",
                f"{pattern!r} is not a valid regular expression: {exc}",
            )
    # host_setup.timeout_seconds, health_check.max_attempts / interval_seconds:
    # registry.FIELD_BOUNDS (the structural check)


def templates(ctx: Context) -> Iterator[Issue]:
    """FormattablePaths may use only the known placeholders (caught at load, not in the job)."""
    checks = [("$.output.log_dir", ctx.recipe.output.log_dir)]
    for host, container in ctx.recipe.container_mounts.items():
        checks.append((join_path("$.container_mounts", host), host))
        checks.append((join_path("$.container_mounts", host), container))
    for path, template in checks:
        unknown = unknown_placeholders(template)
        if unknown:
            yield ctx.issue(
                path,
                f"unknown placeholder {{{unknown[0]}}} in {template!r}; available: "
                "{job_id}, {run_name}, {head_node_ip}, {log_dir}, {model_path}, "
                "{container_image}, {gpus_per_node}",
            )


RULES = (benchmark, concurrencies, runner_inputs, remote_files, misc, templates)
