"""Profiling and automatic Nsight capture as plan data (docs/telemetry-and-bench.md#profiling).

``profiling.type`` nsys / nsys-time wrap the worker program in ``nsys profile``; torch sets the
engines' profiler directory. Step windows travel as env (``PROFILE_<ROLE>_START_STEP``...) and as
``ProfileSpec`` on the process so the runtime can start and stop the capture;
``capture_scope: selected`` limits the wrapper to one worker and rank.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from srt_planner.context import PlanContext
from srt_planner.engines.base import WorkerProcess
from srt_planner.plan import FinalizeStep, ProcessSpec, ProfileSpec
from srt_schema.recipe import ProfilingPhaseConfig, Recipe
from srt_schema.roles import engine_of, engine_type

__all__ = [
    "DEFAULT_START_STEP",
    "DEFAULT_STOP_STEP",
    "MARKER_FOLDER",
    "TRAFFIC_RECORD",
    "auto_nsys_markers",
    "bench_profiling",
    "profile_for",
    "profile_type",
    "profiles_finalize",
    "profiling_env",
    "selected",
]

#: The step window when a phase block leaves it open (the reference's profiling defaults).
DEFAULT_START_STEP = 0
DEFAULT_STOP_STEP = 50
#: Automatic Nsight capture's measured-workload markers, relative to the log folder.
MARKER_FOLDER = "profiles/.control"
#: The summary of a timed capture's extra benchmark traffic, relative to the log folder.
TRAFFIC_RECORD = "profiles/traffic.json"
#: Engines whose workers take start/stop-profile requests (TRT-LLM reads its window from env).
_REQUEST_ENGINES = frozenset({"sglang", "vllm"})

ProfileType = Literal["nsys", "nsys-time", "torch"]


def profile_type(recipe: Recipe) -> ProfileType | None:
    match recipe.profiling.type:
        case "nsys":
            return "nsys"
        case "nsys-time":
            return "nsys-time"
        case "torch":
            return "torch"
        case _:
            return None


def _phase(recipe: Recipe, role: str) -> ProfilingPhaseConfig | None:
    profiling = recipe.profiling
    match role:
        case "prefill":
            return profiling.prefill
        case "decode":
            return profiling.decode
        case _:
            return profiling.aggregated


def selected(recipe: Recipe, role: str, index: int, rank: int) -> bool:
    phase = _phase(recipe, role)
    if phase is None or phase.capture_scope == "all":
        return True
    return phase.worker_index == index and phase.worker_rank == rank


def profile_for(
    recipe: Recipe, role: str, index: int, rank: int, out_dir: str
) -> ProfileSpec | None:
    kind = profile_type(recipe)
    if kind is None or not selected(recipe, role, index, rank):
        return None
    phase = _phase(recipe, role)
    return ProfileSpec(
        type=kind,
        start_step=phase.start_step if phase is not None else None,
        stop_step=phase.stop_step if phase is not None else None,
        output_dir=f"{out_dir}/profiles/{role}",
    )


def _role_key(role: str) -> str:
    return "AGG" if role == "agg" else role.upper()


def profiling_env(recipe: Recipe, role: str, out_dir: str) -> dict[str, str]:
    """Worker env of ``profiling`` and ``observability`` (applied after role and recipe env)."""
    env: dict[str, str] = {}
    kind = profile_type(recipe)
    if kind is not None:
        profiling = recipe.profiling
        env["PROFILING_MODE"] = role
        env["PROFILE_TYPE"] = kind
        phase = _phase(recipe, role)
        key = _role_key(role)
        if phase is not None and phase.start_step is not None:
            env[f"PROFILE_{key}_START_STEP"] = str(phase.start_step)
        if phase is not None and phase.stop_step is not None:
            env[f"PROFILE_{key}_STOP_STEP"] = str(phase.stop_step)
        if kind == "torch":
            env["SGLANG_TORCH_PROFILER_DIR"] = f"{out_dir}/profiles/{role}"
        if kind == "nsys-time":  # the reference's variable; srt-bench gets the duration itself
            env["PROFILE_BENCHMARK_DURATION_SECS"] = str(profiling.benchmark_duration_secs)
        if kind == "nsys" and phase is not None and phase.start_step is not None:
            env["TLLM_PROFILE_START_STOP"] = f"{phase.start_step}-{phase.stop_step}"
            env["TLLM_LLMAPI_ENABLE_NVTX"] = "1"
    observability = recipe.observability
    if observability.enabled:
        env["DYN_LOGGING_SPAN_EVENTS"] = "true"
        env["DYN_LOGGING_JSONL"] = "true"
        nvtx = observability.nsys.nvtx_injection_path
        if observability.nsys.enabled and nvtx:
            env["NVTX_INJECTION64_PATH"] = nvtx
    return env


def _window(phase: ProfilingPhaseConfig | None) -> tuple[int, int]:
    start = phase.start_step if phase is not None and phase.start_step is not None else None
    stop = phase.stop_step if phase is not None and phase.stop_step is not None else None
    first = DEFAULT_START_STEP if start is None else start
    last = (first + DEFAULT_STOP_STEP - DEFAULT_START_STEP) if stop is None else stop
    return first, last


def auto_nsys_markers(recipe: Recipe) -> bool:
    """Automatic Nsight capture bounded by the benchmark's measured workload."""
    observability = recipe.observability
    return (
        profile_type(recipe) is None
        and observability.enabled
        and observability.nsys.enabled
        and observability.nsys.capture_window == "measured_workload"
    )


def bench_profiling(ctx: PlanContext, workers: Sequence[WorkerProcess]) -> dict[str, object] | None:
    """The benchmark side of profiling (srt-bench ``ProfilingControl``): one start/stop target
    per profiled worker leader of an engine that takes profile requests, and the markers of
    automatic Nsight capture. None when there is nothing to send or mark."""
    recipe = ctx.recipe
    kind = profile_type(recipe)
    targets: list[dict[str, object]] = []
    if kind in ("torch", "nsys"):
        prefix = "/engine" if ctx.dynamo_workers else ""
        port_key = "sys" if ctx.dynamo_workers else "http"
        for proc in workers:
            role = proc.endpoint.role
            if not proc.is_leader or proc.engine != 0:
                continue
            if engine_type(engine_of(recipe, role)) not in _REQUEST_ENGINES:
                continue
            phase = _phase(recipe, role)
            selected = phase is not None and phase.capture_scope == "selected"
            if selected and phase is not None and phase.worker_index != proc.endpoint.index:
                continue
            start, stop = _window(phase)
            activities = ["CPU", "GPU"] if kind == "torch" else ["CUDA_PROFILER"]
            targets.append(
                {
                    "role": role,
                    "worker": f"{role}_w{proc.endpoint.index}",
                    "url": f"http://{ctx.address(proc.node)}:{proc.ports.get(port_key, 0)}",
                    "start_path": f"{prefix}/start_profile",
                    "stop_path": f"{prefix}/stop_profile",
                    "start_body": {
                        "output_dir": f"{ctx.in_log_dir}/profiles/{role}",
                        "start_step": start,
                        "num_steps": stop - start,
                        "activities": activities,
                    },
                }
            )
    markers = auto_nsys_markers(recipe)
    # A timed capture needs traffic while it runs: sa-bench (the client srt-bench drives itself)
    # keeps the deployment busy for benchmark_duration_secs (validate refuses it elsewhere).
    timed = kind == "nsys-time" and recipe.benchmark.type == "sa-bench"
    if not targets and not markers and not timed:
        return None
    control: dict[str, object] = {
        "targets": targets,
        "record": f"{ctx.in_log_dir}/profiles/control.jsonl",
    }
    if markers:
        control["marker_dir"] = f"{ctx.in_log_dir}/{MARKER_FOLDER}"
    if timed:
        control["traffic_seconds"] = recipe.profiling.benchmark_duration_secs
        control["traffic_record"] = f"{ctx.in_log_dir}/{TRAFFIC_RECORD}"
    return control


def profiles_finalize(
    ctx: PlanContext,
    processes: Sequence[ProcessSpec],
    workers: Sequence[WorkerProcess],
    *,
    benchmark: bool,
) -> tuple[FinalizeStep, ...]:
    """``srt-bench profiles`` after the profiled processes stopped (their nsys reports are
    written as they end, within their stop grace): lists the profiles, names the missing ones,
    adds them to the rollup. None when nothing is profiled."""
    wrapped = [p for p in processes if p.profile is not None and p.profile.nsys_report]
    control = bench_profiling(ctx, workers) if benchmark else None
    targets = control.get("targets", []) if control is not None else []
    assert isinstance(targets, list)
    if not wrapped and not targets:
        return ()
    argv = ["srt-bench", "profiles", "--log-dir", ctx.log_dir]
    for proc in wrapped:
        assert proc.profile is not None and proc.profile.nsys_report is not None
        argv += ["--expect-nsys", proc.profile.nsys_report]
    if profile_type(ctx.recipe) == "torch":
        for role in sorted({str(t["role"]) for t in targets}):
            argv += ["--expect-dir", role]
    grace = max((p.stop_grace_seconds for p in wrapped), default=0.0)
    return (
        FinalizeStep(
            name="profiles",
            argv=tuple(argv),
            log_file="profiles.out",
            stop_first=tuple(p.name for p in wrapped),
            timeout_seconds=120.0 + grace,
        ),
    )
