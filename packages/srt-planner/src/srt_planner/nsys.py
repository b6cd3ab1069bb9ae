"""Nsight Systems around a worker or a frontend (docs/telemetry-and-bench.md#profiling).

Two sources ask for it:

- ``profiling.type: nsys`` / ``nsys-time``: ``nsys profile`` wraps the worker. ``nsys`` captures
  from the engine's ``cudaProfilerStart`` (the start-profile request srt-bench sends with
  ``activities: [CUDA_PROFILER]``) to the stop; ``nsys-time`` from ``delay_secs`` for
  ``duration_secs``.
- automatic capture (``observability.enabled`` + ``observability.nsys``, no ``profiling``):
  ``including_startup`` wraps the whole run in ``nsys profile``; ``measured_workload`` launches
  the program in an nsys session (``nsys launch --session-new``) and a watcher next to it in the
  same step starts the capture (``nsys start``) when the benchmark writes its
  ``measured_workload.start`` marker and ends it (``nsys stop``, bounded by
  ``report_timeout_secs``) at ``measured_workload.stop``.

Reports are waited for: a wrapped process's stop grace is ``observability.nsys.
report_timeout_secs`` (nsys writes the report after the program ends), and the plan's
``profiles`` finalize step reports every expected report that is missing. In a stand-in job the
profiler is replaced with the engine (``srt_runtime.standin.nsys``, same command lines).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

import msgspec

from srt_planner.context import PlanContext
from srt_planner.plan import ProfileSpec
from srt_planner.profiling import MARKER_FOLDER, profile_type, selected
from srt_schema.recipe import Recipe

__all__ = ["STAND_IN_NSYS", "NsysWrap", "frontend_nsys", "worker_nsys"]

#: The stand-in profiler's module (srt-runtime).
STAND_IN_NSYS = "srt_runtime.standin.nsys"


class NsysWrap(msgspec.Struct, frozen=True, kw_only=True):
    """How one process is wrapped: the argv prefix, the step's extra preamble (the session
    watcher), the report's ``-o`` path relative to the log folder, the stop grace it needs."""

    prefix: tuple[str, ...]
    preamble: tuple[str, ...] = ()
    output: str
    stop_grace_seconds: float


def _program(ctx: PlanContext) -> tuple[str, ...]:
    return ("nsys",) if ctx.stand_in is None else (ctx.python, "-m", STAND_IN_NSYS)


def _explicit(
    ctx: PlanContext, output: str, *, timed: bool, trtllm: bool, dynamo: bool
) -> list[str]:
    profiling = ctx.recipe.profiling
    argv = [*_program(ctx), "profile"]
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


def _library_paths(recipe: Recipe) -> tuple[str, ...]:
    """``nsys_library_paths`` go in front of the step's own ``LD_LIBRARY_PATH`` (the container's
    CUDA libraries stay reachable), for nsys and the worker it starts."""
    paths = recipe.profiling.nsys_library_paths
    if not paths:
        return ()
    joined = shlex.quote(":".join(paths))
    return (f"export LD_LIBRARY_PATH={joined}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}",)


def _sampling(recipe: Recipe) -> list[str]:
    match recipe.observability.nsys.cpu_sampling:
        case "system-wide":
            return ["--sample=system-wide", "--cpuctxsw=system-wide"]
        case "process-tree":
            return ["--sample=process-tree", "--cpuctxsw=process-tree"]
        case _:
            return ["--sample=none", "--cpuctxsw=none"]


def _automatic(ctx: PlanContext, output: str, session: str) -> NsysWrap:
    nsys = ctx.recipe.observability.nsys
    program = _program(ctx)
    grace = float(nsys.report_timeout_secs)
    rel = output.removeprefix(f"{ctx.in_log_dir}/")
    if nsys.capture_window != "measured_workload":
        prefix = (*program, "profile", "-t", "cuda,nvtx", *_sampling(ctx.recipe))
        prefix += ("--force-overwrite", "true", "-o", output)
        return NsysWrap(prefix=prefix, output=rel, stop_grace_seconds=grace)
    markers = shlex.quote(f"{ctx.in_log_dir}/{MARKER_FOLDER}")
    tool = shlex.join(program)
    start_argv = [*program, "start", f"--session={session}", *_sampling(ctx.recipe)]
    start = shlex.join([*start_argv, "--force-overwrite=true", "-o", output])
    stop = f"timeout {int(nsys.report_timeout_secs)} {tool} stop --session={session}"
    # The watcher also ends the capture when the step is stopped first (SIGTERM reaches every
    # process of the step): the report is then written before the engine goes away.
    watcher = (
        '{ ( started=0; end_capture() { if [ "$started" = 1 ]; then started=0; '
        f"{stop} || echo 'srt: nsys stop --session={session} failed or timed out' >&2; fi; }}; "
        "trap 'end_capture; exit 0' TERM INT; "
        f"while [ ! -e {markers}/measured_workload.start ]; do sleep 0.2; done; {start} && "
        f"started=1; while [ ! -e {markers}/measured_workload.stop ]; do sleep 0.2; done; "
        "end_capture ) & }"
    )
    prefix = (*program, "launch", f"--session-new={session}", "-t", "cuda,nvtx")
    return NsysWrap(prefix=prefix, preamble=(watcher,), output=rel, stop_grace_seconds=grace)


def worker_nsys(
    ctx: PlanContext,
    role: str,
    index: int,
    rank: int,
    *,
    node: str,
    gpus: Sequence[int],
    trtllm: bool,
) -> NsysWrap | None:
    """The wrap of one worker process, from ``profiling`` or ``observability.nsys``."""
    recipe = ctx.recipe
    suffix = "-".join(str(g) for g in gpus)
    stem = f"{node}_{role}_w{index}_profile_gpu{suffix}"
    output = f"{ctx.in_log_dir}/profiles/{role}/{stem}"
    kind = profile_type(recipe)
    if kind in ("nsys", "nsys-time"):
        if not selected(recipe, role, index, rank):
            return None
        prefix = _explicit(
            ctx, output, timed=kind == "nsys-time", trtllm=trtllm, dynamo=ctx.dynamo_workers
        )
        return NsysWrap(
            prefix=tuple(prefix),
            preamble=_library_paths(recipe),
            output=f"profiles/{role}/{stem}",
            stop_grace_seconds=float(recipe.observability.nsys.report_timeout_secs),
        )
    observability = recipe.observability
    if kind is None and observability.enabled and observability.nsys.enabled:
        return _automatic(ctx, output, f"srt_{stem}")
    return None


def frontend_nsys(ctx: PlanContext, name: str) -> NsysWrap | None:
    observability = ctx.recipe.observability
    if profile_type(ctx.recipe) is None and observability.enabled and observability.nsys.enabled:
        return _automatic(ctx, f"{ctx.in_log_dir}/profiles/frontend/{name}", f"srt_{name}")
    return None


def with_report(
    profile: ProfileSpec | None, nsys: NsysWrap | None, out_dir: str
) -> ProfileSpec | None:
    """The process's ``ProfileSpec`` carrying the report its wrapper writes (automatic capture
    gets a ``nsys-auto`` spec of its own)."""
    if nsys is None:
        return profile
    if profile is None:
        return ProfileSpec(type="nsys-auto", output_dir=out_dir, nsys_report=nsys.output)
    return msgspec.structs.replace(profile, nsys_report=nsys.output)
