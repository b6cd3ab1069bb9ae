"""Profiling and automatic Nsight capture as plan data (docs/telemetry-and-bench.md#profiling).

``profiling.type`` nsys / nsys-time wrap the worker program in ``nsys profile``; torch sets the
engines' profiler directory. Step windows travel as env (``PROFILE_<ROLE>_START_STEP``...) and as
``ProfileSpec`` on the process so the runtime can start and stop the capture;
``capture_scope: selected`` limits the wrapper to one worker and rank.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from srt_planner.plan import ProfileSpec
from srt_schema.recipe import ProfilingPhaseConfig, Recipe

__all__ = ["frontend_nsys_prefix", "profile_for", "profiling_env", "worker_nsys_prefix"]

ProfileType = Literal["nsys", "nsys-time", "torch"]


def _type(recipe: Recipe) -> ProfileType | None:
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


def _selected(recipe: Recipe, role: str, index: int, rank: int) -> bool:
    phase = _phase(recipe, role)
    if phase is None or phase.capture_scope == "all":
        return True
    return phase.worker_index == index and phase.worker_rank == rank


def profile_for(
    recipe: Recipe, role: str, index: int, rank: int, out_dir: str
) -> ProfileSpec | None:
    kind = _type(recipe)
    if kind is None or not _selected(recipe, role, index, rank):
        return None
    phase = _phase(recipe, role)
    return ProfileSpec(
        type=kind,
        start_step=phase.start_step if phase is not None else None,
        stop_step=phase.stop_step if phase is not None else None,
        output_dir=f"{out_dir}/profiles/{role}",
    )


def _nsys(recipe: Recipe, output: str, *, timed: bool, trtllm: bool, dynamo: bool) -> list[str]:
    profiling = recipe.profiling
    argv = ["nsys", "profile"]
    if trtllm:
        argv += ["-t", "cuda,nvtx,ucx", "--sample=none", "--cuda-graph-trace=node"]
    else:
        argv += ["-t", profiling.nsys_trace, "--cuda-graph-trace=node"]
    if timed:
        if profiling.delay_secs is not None:
            argv += ["--delay", str(profiling.delay_secs)]
        if profiling.duration_secs is not None:
            argv += ["--duration", str(profiling.duration_secs)]
    else:
        argv += ["-c", "cudaProfilerApi", "--capture-range-end", profiling.capture_range_end]
    if trtllm:
        argv += ["--kill", "none", "--wait", "all"]
    argv += ["--force-overwrite", "true"]
    argv += list(profiling.extra_nsys_args or ())
    fork = profiling.trace_fork_before_exec
    if fork is None:
        fork = dynamo
    if fork:
        argv.append("--trace-fork-before-exec=true")
    return [*argv, "-o", output]


def worker_nsys_prefix(
    recipe: Recipe,
    role: str,
    index: int,
    rank: int,
    *,
    node: str,
    gpus: Sequence[int],
    out_dir: str,
    trtllm: bool,
    dynamo: bool,
) -> list[str]:
    """``nsys profile ...`` for a worker, from ``profiling`` or ``observability.nsys``."""
    suffix = "-".join(str(g) for g in gpus)
    output = f"{out_dir}/profiles/{role}/{node}_{role}_w{index}_profile_gpu{suffix}"
    kind = _type(recipe)
    if kind in ("nsys", "nsys-time"):
        if not _selected(recipe, role, index, rank):
            return []
        return _nsys(recipe, output, timed=kind == "nsys-time", trtllm=trtllm, dynamo=dynamo)
    observability = recipe.observability
    if kind is None and observability.enabled and observability.nsys.enabled:
        return _observability_nsys(recipe, output)
    return []


def frontend_nsys_prefix(recipe: Recipe, name: str, out_dir: str) -> list[str]:
    observability = recipe.observability
    if _type(recipe) is None and observability.enabled and observability.nsys.enabled:
        return _observability_nsys(recipe, f"{out_dir}/profiles/frontend/{name}")
    return []


def _observability_nsys(recipe: Recipe, output: str) -> list[str]:
    nsys = recipe.observability.nsys
    argv = ["nsys", "profile", "-t", "cuda,nvtx"]
    match nsys.cpu_sampling:
        case "system-wide":
            argv += ["--sample=system-wide", "--cpuctxsw=system-wide"]
        case "process-tree":
            argv += ["--sample=process-tree", "--cpuctxsw=process-tree"]
        case "none":
            argv += ["--sample=none", "--cpuctxsw=none"]
    if nsys.capture_window == "measured_workload":
        argv += ["-c", "nvtx", "-p", "srt_measured_workload", "--capture-range-end", "stop"]
    return [*argv, "--force-overwrite", "true", "-o", output]


def _role_key(role: str) -> str:
    return "AGG" if role == "agg" else role.upper()


def profiling_env(recipe: Recipe, role: str, out_dir: str) -> dict[str, str]:
    """Worker env of ``profiling`` and ``observability`` (applied after role and recipe env)."""
    env: dict[str, str] = {}
    kind = _type(recipe)
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
        if kind == "nsys-time":
            env["PROFILE_BENCHMARK_DURATION_SECS"] = str(profiling.benchmark_duration_secs)
        if kind == "nsys" and phase is not None and phase.start_step is not None:
            env["TLLM_PROFILE_START_STOP"] = f"{phase.start_step}-{phase.stop_step}"
            env["TLLM_LLMAPI_ENABLE_NVTX"] = "1"
        if profiling.nsys_library_paths and kind != "torch":
            env["LD_LIBRARY_PATH"] = ":".join(profiling.nsys_library_paths)
    observability = recipe.observability
    if observability.enabled:
        env["DYN_LOGGING_SPAN_EVENTS"] = "true"
        env["DYN_LOGGING_JSONL"] = "true"
        nvtx = observability.nsys.nvtx_injection_path
        if observability.nsys.enabled and nvtx:
            env["NVTX_INJECTION64_PATH"] = nvtx
    return env
