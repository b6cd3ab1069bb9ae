"""The benchmark client process and its ``bench.json`` (srt-bench ``BenchRunConfig``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from srt_planner.context import PlanContext
from srt_planner.datasets import plan_fetches
from srt_planner.engines.base import WorkerProcess
from srt_planner.frontends import FrontendLayout, RouterInput, placed_node, public_url
from srt_planner.mounts import is_hf_model
from srt_planner.plan import ContainerSpec, GeneratedFile, ProcessSpec
from srt_planner.power import window_dir
from srt_planner.profiling import MARKER_FOLDER, auto_nsys_markers, bench_profiling
from srt_planner.srun import SrunStep, render_srun, wrap_command
from srt_planner.telemetry import scrape_window_dir
from srt_schema.fetch import DatasetFetch
from srt_schema.recipe import BenchmarkConfig
from srt_schema.registry import BENCHMARK_FIELDS, is_local_tokenizer, is_tokenizer_class

__all__ = [
    "BENCH_CONFIG",
    "HF_MODEL_RECORD",
    "TOKENIZER_STEP",
    "build_benchmark",
    "needs_tokenizer_step",
    "render_run_config",
]

BENCH_CONFIG = "bench.json"
#: The one-shot step that loads the benchmark's tokenizer before the workers start.
TOKENIZER_STEP = "bench_tokenizer"
#: What that step writes for an ``hf:`` model (srt_bench.hub.HubSnapshot; the runtime copies it
#: into recipe.lock.yaml as ``lock.hf_model``).
HF_MODEL_RECORD = "hf_model.json"


def _role_env(ctx: PlanContext, leaders: Sequence[WorkerProcess], role: str) -> dict[str, str]:
    chosen = [p for p in leaders if p.endpoint.role == role]
    if not chosen:
        return {}
    port_key = "sys" if ctx.dynamo_workers else "http"
    key = role.upper()
    return {
        f"SRT_{key}_IPS": ",".join(ctx.address(p.node) for p in chosen),
        f"SRT_{key}_ENDPOINTS": ",".join(
            f"{ctx.address(p.node)}:{p.ports.get(port_key, 0)}" for p in chosen
        ),
    }


def _tokenizer_path(ctx: PlanContext, benchmark: BenchmarkConfig) -> str:
    """``benchmark.custom_tokenizer`` when it is a local tokenizer.json or its folder; else, for
    an ``hf:`` model, ``hf:<repo>`` for sa-bench (srt-bench fetches the tokenizer files first,
    srt_bench.hub; with stand-in engines too, so that path is exercised) and the bare repository
    id for the other clients (aiperf, lm-eval load a hub id themselves); else the model folder
    (the shared one: a staged copy is only on worker nodes). A ``custom_tokenizer`` class builds
    the tokenizer from this folder."""
    custom = benchmark.custom_tokenizer
    if custom is not None and is_local_tokenizer(custom):
        return custom
    path = ctx.recipe.model.path
    if is_hf_model(path):
        return path if benchmark.type == "sa-bench" else ctx.shared_model_arg
    return ctx.shared_model_arg


def _stand_in_tokenizer(ctx: PlanContext, benchmark: BenchmarkConfig) -> str | None:
    """With stand-in engines, for a benchmark type that takes no ``custom_tokenizer`` (the
    stand-in mode sets that field for the others at load): the stand-in model, which srt-bench
    counts tokens with when ``tokenizer_path`` is not a folder on the benchmark's node (a corpus
    recipe's ``/models/...``). A model folder that is there (a test's byte-level tokenizer)
    stays the client's tokenizer."""
    if ctx.stand_in is None or "custom_tokenizer" in BENCHMARK_FIELDS.get(benchmark.type, ()):
        return None
    return ctx.stand_in.model


def needs_tokenizer_step(ctx: PlanContext) -> bool:
    """An sa-bench whose tokenizer comes from the hub or from a tokenizer class: it is loaded
    once before the workers (:func:`build_benchmark`), so a refused repository or a class that
    cannot be imported fails the job before any engine loads."""
    bench = ctx.recipe.benchmark
    if bench.type != "sa-bench":
        return False
    custom = bench.custom_tokenizer
    if custom is not None and is_local_tokenizer(custom):
        return False
    return is_hf_model(ctx.recipe.model.path) or (custom is not None and is_tokenizer_class(custom))


def render_run_config(
    ctx: PlanContext,
    benchmark: BenchmarkConfig,
    endpoint: str,
    *,
    total_gpus: int,
    prefill_gpus: int | None = None,
    decode_gpus: int | None = None,
    slow_down_urls: Sequence[str] = (),
    profiling: dict[str, object] | None = None,
    fetch: Sequence[DatasetFetch] = (),
) -> str:
    """An srt-bench ``BenchRunConfig`` as JSON: ``benchmark`` against ``endpoint``."""
    config: dict[str, Any] = {
        "benchmark": msgspec.to_builtins(benchmark),
        "endpoint": endpoint,
        "model_name": ctx.served_model_name,
        "tokenizer_path": _tokenizer_path(ctx, benchmark),
        "total_gpus": total_gpus,
        "prefill_gpus": prefill_gpus,
        "decode_gpus": decode_gpus,
        "output_dir": ctx.in_log_dir,
        "job_name": ctx.recipe.name,
        "frontend_type": ctx.recipe.frontend.type,
    }
    stand_in_tokenizer = _stand_in_tokenizer(ctx, benchmark)
    if stand_in_tokenizer is not None:
        config["stand_in_tokenizer"] = stand_in_tokenizer
    if slow_down_urls:
        config["slow_down_urls"] = list(slow_down_urls)
    if profiling is not None:
        config["profiling"] = profiling
    if fetch:
        # downloaded by the benchmark step before its client starts (srt_planner.datasets)
        config["fetch"] = msgspec.to_builtins(list(fetch))
    return msgspec.json.encode(config, order="sorted").decode() + "\n"


def _slow_down_urls(
    ctx: PlanContext, bench: BenchmarkConfig, leaders: Sequence[WorkerProcess]
) -> tuple[str, ...]:
    """SGLang ``/slow_down`` targets: each decode leader's HTTP server, when the recipe asks for
    it (validate checks the frontend and the values)."""
    if bench.slow_down_sleep_time is None and bench.slow_down_wait_time is None:
        return ()
    return tuple(
        f"http://{ctx.address(p.node)}:{p.ports['http']}"
        for p in leaders
        if p.endpoint.role == "decode" and "http" in p.ports
    )


def build_benchmark(
    ctx: PlanContext,
    layout: FrontendLayout,
    routers: RouterInput,
    workers: Sequence[WorkerProcess],
) -> tuple[list[ProcessSpec], list[GeneratedFile], str | None]:
    """The benchmark step (none for ``manual``) and the config file it reads."""
    bench = ctx.recipe.benchmark
    if bench.type == "manual":
        return [], [], None
    node = placed_node(ctx, bench.placement.node, routers, "benchmark")
    endpoint = public_url(ctx, layout)
    leaders = [p for p in workers if p.is_leader]
    by_role: dict[str, int] = {}
    for proc in workers:
        by_role[proc.endpoint.role] = by_role.get(proc.endpoint.role, 0) + len(proc.gpus)
    content = render_run_config(
        ctx,
        bench,
        endpoint,
        total_gpus=sum(by_role.values()),
        prefill_gpus=by_role.get("prefill"),
        decode_gpus=by_role.get("decode"),
        slow_down_urls=_slow_down_urls(ctx, bench, leaders),
        profiling=bench_profiling(ctx, workers),
        fetch=plan_fetches(ctx.recipe, ctx.datasets),
    )
    env = {
        "SRTCTL_FRONTEND_TYPE": ctx.recipe.frontend.type,
        "SRT_FRONTEND_HOST": ctx.address(layout.public_node),
        "SRT_FRONTEND_PORT": str(layout.public_port),
        "SRT_GPUS_PER_NODE": str(ctx.gpus_per_node),
        "SRT_WORKER_NODES": ",".join(ctx.carving.workers),
    }
    for role in ("prefill", "decode", "agg"):
        env |= _role_env(ctx, leaders, role)
    for name, pool in ctx.carving.pools.items():
        key = name.upper().replace("-", "_")
        env[f"SRT_SERVICE_{key}_NODES"] = ",".join(pool)
        env[f"SRT_SERVICE_{key}_IPS"] = ",".join(ctx.address(n) for n in pool)
        env[f"SRT_SERVICE_{key}_NODE_COUNT"] = str(len(pool))
    env |= ctx.recipe.environment
    env |= bench.env
    if auto_nsys_markers(ctx.recipe):
        # a custom client marks its measured workload itself (touch start, then stop)
        env["SRT_PROFILE_MARKER_DIR"] = f"{ctx.in_log_dir}/{MARKER_FOLDER}"
    windows = window_dir(ctx)
    sampled = scrape_window_dir(ctx)
    if windows is None and sampled is not None:
        windows = sampled[1]
    if windows is not None:
        # Power telemetry and the metrics scraper's window sampling: srt-bench stamps each
        # measured phase's window here (it creates the folder).
        env["SRT_MEASUREMENT_WINDOW_DIR"] = windows
    tokenizer_step = None
    if needs_tokenizer_step(ctx):
        tokenizer_step = _tokenizer_step(ctx, node, dict(env), ctx.container(bench.container_image))
        if is_hf_model(ctx.recipe.model.path):
            # that step fetched the tokenizer into the HF cache: the client reads it from there
            env["HF_HUB_OFFLINE"] = "1"
    argv: tuple[str, ...]
    if bench.type == "custom" and bench.command:
        argv = ("bash", "-lc", bench.command)
    else:
        argv = ("srt-bench", "run", "--config", f"{ctx.in_log_dir}/{BENCH_CONFIG}")
    container = ctx.container(bench.container_image)
    step = SrunStep(
        step_name="benchmark",
        nodes=(node,),
        log_path=ctx.log_path("benchmark.out"),
        container=container,
        options=dict(ctx.recipe.srun_options),
        het_group=ctx.het_group(node),
    )
    task = wrap_command(argv, env=env, head=ctx.cluster.default_bash_preamble)
    spec = ProcessSpec(
        name="benchmark",
        kind="benchmark",
        role=bench.type,
        nodes=(node,),
        env=env,
        argv=argv,
        srun_argv=() if ctx.local else render_srun(step, task, job_id=ctx.job_id),
        container=container,
        log_file="benchmark.out",
        phase="benchmark",
        oneshot=True,
        stop_grace_seconds=15.0,
        stop_tier=0,
        het_group=step.het_group,
    )
    specs = [spec]
    if tokenizer_step is not None:
        specs.insert(0, tokenizer_step)
    return specs, [GeneratedFile(path=BENCH_CONFIG, content=content)], BENCH_CONFIG


def _tokenizer_step(
    ctx: PlanContext, node: str, env: dict[str, str], container: ContainerSpec | None
) -> ProcessSpec:
    """``srt-bench tokenizer`` on the benchmark's node, in its container and environment, before
    the workers (phase ``model_staging``); a failure fails the job there."""
    argv = (
        "srt-bench",
        "tokenizer",
        "--config",
        f"{ctx.in_log_dir}/{BENCH_CONFIG}",
        "--record",
        f"{ctx.in_log_dir}/{HF_MODEL_RECORD}",
    )
    log = f"{TOKENIZER_STEP}.out"
    step = SrunStep(
        step_name=TOKENIZER_STEP,
        nodes=(node,),
        log_path=ctx.log_path(log),
        container=container,
        options=dict(ctx.recipe.srun_options),
        het_group=ctx.het_group(node),
    )
    task = wrap_command(argv, env=env, head=ctx.cluster.default_bash_preamble)
    return ProcessSpec(
        name=TOKENIZER_STEP,
        kind="service",
        role=TOKENIZER_STEP,
        nodes=(node,),
        env=env,
        argv=argv,
        srun_argv=() if ctx.local else render_srun(step, task, job_id=ctx.job_id),
        container=container,
        log_file=log,
        phase="model_staging",
        critical=True,
        oneshot=True,
        implied_by="model.path hf: / benchmark.custom_tokenizer class",
        het_group=step.het_group,
    )
