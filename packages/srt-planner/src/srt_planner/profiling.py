"""Profiling and automatic Nsight capture as plan data (telemetry-bench-reporting.md, profiling).

``profiling.type`` nsys / nsys-time wrap the worker program in ``nsys profile``; torch sets the
engines' profiler directory. Step windows travel as ``ProfileSpec`` on the process so the runtime
can start and stop the capture; ``capture_scope: selected`` limits it to one worker and rank.
"""

from __future__ import annotations

from typing import Literal

from srt_planner.plan import ProfileSpec
from srt_schema.recipe import ProfilingPhaseConfig, Recipe

__all__ = ["frontend_nsys_prefix", "profile_for", "profiling_env", "worker_nsys_prefix"]


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
    kind: Literal["nsys", "nsys-time", "torch"]
    match recipe.profiling.type:
        case "nsys":
            kind = "nsys"
        case "nsys-time":
            kind = "nsys-time"
        case "torch":
            kind = "torch"
        case _:
            return None
    if not _selected(recipe, role, index, rank):
        return None
    phase = _phase(recipe, role)
    return ProfileSpec(
        type=kind,
        start_step=phase.start_step if phase is not None else None,
        stop_step=phase.stop_step if phase is not None else None,
        output_dir=f"{out_dir}/profiles/{role}",
    )


def _nsys(recipe: Recipe, output: str, *, timed: bool) -> list[str]:
    profiling = recipe.profiling
    argv = ["nsys", "profile", "-t", profiling.nsys_trace]
    if timed:
        if profiling.delay_secs is not None:
            argv += ["--delay", str(profiling.delay_secs)]
        if profiling.duration_secs is not None:
            argv += ["--duration", str(profiling.duration_secs)]
    else:
        argv += ["--capture-range=cudaProfilerApi"]
        argv += [f"--capture-range-end={profiling.capture_range_end}"]
    if profiling.trace_fork_before_exec is not None:
        argv.append(f"--trace-fork-before-exec={str(profiling.trace_fork_before_exec).lower()}")
    argv += list(profiling.extra_nsys_args or ())
    return [*argv, "-o", output, "-f", "true"]


def worker_nsys_prefix(
    recipe: Recipe, role: str, index: int, rank: int, *, node: str, out_dir: str
) -> list[str]:
    """``nsys profile ...`` for a worker, from ``profiling`` or ``observability.nsys``."""
    output = f"{out_dir}/profiles/{role}/{node}_w{index}_r{rank}"
    kind = recipe.profiling.type
    if kind in ("nsys", "nsys-time") and _selected(recipe, role, index, rank):
        return _nsys(recipe, output, timed=kind == "nsys-time")
    observability = recipe.observability
    if observability.enabled and observability.nsys.enabled:
        return _observability_nsys(recipe, output)
    return []


def frontend_nsys_prefix(recipe: Recipe, name: str, out_dir: str) -> list[str]:
    observability = recipe.observability
    if observability.enabled and observability.nsys.enabled:
        return _observability_nsys(recipe, f"{out_dir}/profiles/frontend/{name}")
    return []


def _observability_nsys(recipe: Recipe, output: str) -> list[str]:
    nsys = recipe.observability.nsys
    argv = ["nsys", "profile", "-t", "nvtx", f"--sample={_sampling(nsys.cpu_sampling)}"]
    if nsys.capture_window == "measured_workload":
        argv += ["--capture-range=nvtx", "--nvtx-capture=srt_measured_workload"]
    return [*argv, "-o", output, "-f", "true"]


def _sampling(scope: str) -> str:
    return {"system-wide": "system-wide", "process-tree": "process-tree"}.get(scope, "none")


def profiling_env(recipe: Recipe, role: str, out_dir: str) -> dict[str, str]:
    env: dict[str, str] = {}
    if recipe.profiling.type == "torch":
        env["SGLANG_TORCH_PROFILER_DIR"] = f"{out_dir}/profiles/{role}"
        env["VLLM_TORCH_PROFILER_DIR"] = f"{out_dir}/profiles/{role}"
    paths = recipe.profiling.nsys_library_paths
    if paths and recipe.profiling.type in ("nsys", "nsys-time"):
        env["LD_LIBRARY_PATH"] = ":".join(paths)
    nvtx = recipe.observability.nsys.nvtx_injection_path
    if recipe.observability.enabled and recipe.observability.nsys.enabled and nvtx:
        env["NVTX_INJECTION64_PATH"] = nvtx
    return env
