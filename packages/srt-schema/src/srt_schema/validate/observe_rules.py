"""Rules for ``profiling``, ``observability``, ``telemetry`` and ``reporting``
(docs/recipes.md#observability-rules)."""

from __future__ import annotations

import math
from collections.abc import Iterator

from srt_schema.errors import Issue
from srt_schema.recipe import ProfilingPhaseConfig, TelemetryExporterConfig
from srt_schema.validate.context import Context

__all__ = ["RULES", "safe_subdir_problem"]

_PROFILERS = ("none", "nsys", "nsys-time", "torch")
_MEASURED_WORKLOAD_TYPES = (
    "sa-bench",
    "sglang-bench",
    "trace-replay",
    "mooncake-router",
    "custom",
    "manual",
)
_DCGM_BENCHMARKS = ("sa-bench", "agentic", "agentx", "custom", "manual")


def safe_subdir_problem(value: str) -> str | None:
    """Why ``value`` is not a safe relative sub-directory, or None."""
    if not value:
        return "must not be empty"
    if value.startswith(("/", "~")):
        return "must be a relative path (no leading / or ~)"
    parts = value.split("/")
    if any(p in ("", "..") for p in parts):
        return "must not contain '..' or empty parts"
    return None


def profiling(ctx: Context) -> Iterator[Issue]:
    prof = ctx.recipe.profiling
    if prof.type not in _PROFILERS:
        yield ctx.issue(
            "$.profiling.type",
            f"'{prof.type}' is not a profiler; use one of {', '.join(_PROFILERS)}",
        )
        return
    if prof.type == "none":
        return
    engines = set(ctx.role_engine_types().values())
    if prof.type == "torch" and "trtllm" in engines:
        yield ctx.issue("$.profiling.type", "torch profiling is not supported with trtllm")
    if "mocker" in engines:
        yield ctx.issue(
            "$.profiling.type",
            "the Dynamo mocker runs no GPU kernels and serves no profiler endpoint, so nothing "
            "would be profiled; remove profiling (or set profiling.type: none)",
        )
        return
    yield from _knobs_of_another_type(ctx, engines)
    if prof.type in ("nsys", "nsys-time"):
        if not prof.nsys_trace:
            yield ctx.issue("$.profiling.nsys_trace", "must not be empty")
        if not prof.capture_range_end:
            yield ctx.issue("$.profiling.capture_range_end", "must not be empty")
        if prof.nsys_library_paths is not None and any(not p for p in prof.nsys_library_paths):
            yield ctx.issue("$.profiling.nsys_library_paths", "must not contain empty entries")
    if prof.type == "nsys-time" and (prof.delay_secs is None or prof.duration_secs is None):
        yield ctx.issue(
            "$.profiling", "profiling.type nsys-time needs both delay_secs and duration_secs"
        )
    elif prof.type == "nsys-time":
        yield from _timed_window(ctx)
    phases: dict[str, ProfilingPhaseConfig | None] = {
        "prefill": prof.prefill,
        "decode": prof.decode,
        "aggregated": prof.aggregated,
    }
    needed: tuple[str, ...]
    forbidden: tuple[str, ...]
    if ctx.disaggregated:
        needed, forbidden = ("prefill", "decode"), ("aggregated",)
        workers = {"prefill": ctx.workers("prefill"), "decode": ctx.workers("decode")}
    else:
        needed, forbidden = ("aggregated",), ("prefill", "decode")
        workers = {"aggregated": ctx.workers("agg")}
    layout = "disaggregated" if ctx.disaggregated else "aggregated"
    for phase in needed:
        if phases[phase] is None and prof.type == "nsys-time":
            continue  # the time window applies to every worker of the phase
        if phases[phase] is None:
            yield ctx.issue(
                f"$.profiling.{phase}", f"a {layout} recipe profiles with profiling.{phase}"
            )
        elif workers[phase] == 0:
            yield ctx.issue(f"$.profiling.{phase}", f"profiling.{phase} needs {phase} workers")
    for phase in forbidden:
        if phases[phase] is not None:
            yield ctx.issue(
                f"$.profiling.{phase}", f"profiling.{phase} does not apply to a {layout} recipe"
            )
    yield from _step_windows(ctx, phases, engines)
    for phase, config in phases.items():
        if config is None or config.capture_scope != "selected" or phase not in workers:
            continue
        if not 0 <= config.worker_index < max(workers[phase], 1):
            yield ctx.issue(
                f"$.profiling.{phase}.worker_index",
                f"worker_index {config.worker_index} is out of range; the phase has "
                f"{workers[phase]} worker(s)",
            )


#: Knobs of the Nsight wrapper: torch profiling has no wrapper, so they would do nothing.
_NSYS_KNOBS = (
    "nsys_trace",
    "capture_range_end",
    "extra_nsys_args",
    "nsys_library_paths",
    "trace_fork_before_exec",
)
#: Knobs of the time window (``nsys --delay/--duration`` and the traffic that must cover it).
_TIMED_KNOBS = ("delay_secs", "duration_secs", "benchmark_duration_secs")


def _raw(ctx: Context, knob: str) -> str:
    return repr(ctx.raw["profiling"][knob])


def _knobs_of_another_type(ctx: Context, engines: set[str]) -> Iterator[Issue]:
    """A knob the chosen profiler does not use is refused, never ignored (docs/recipes.md#
    observability-rules)."""
    kind = ctx.recipe.profiling.type
    if kind == "torch":
        for knob in _NSYS_KNOBS:
            if ctx.has_raw("profiling", knob):
                yield ctx.issue(
                    f"$.profiling.{knob}",
                    f"profiling.{knob} ({_raw(ctx, knob)}) configures the Nsight wrapper, and "
                    "profiling.type torch runs none; remove it, or set profiling.type nsys "
                    "(or nsys-time)",
                )
    if kind != "nsys-time":
        for knob in _TIMED_KNOBS:
            if ctx.has_raw("profiling", knob):
                yield ctx.issue(
                    f"$.profiling.{knob}",
                    f"profiling.{knob} ({_raw(ctx, knob)}) belongs to the time window of "
                    f"profiling.type nsys-time, and profiling.type {kind} does not use it; "
                    "remove it, or set profiling.type: nsys-time",
                )
    if kind == "nsys-time" and ctx.has_raw("profiling", "capture_range_end"):
        yield ctx.issue(
            "$.profiling.capture_range_end",
            f"profiling.capture_range_end ({_raw(ctx, 'capture_range_end')}) ends a "
            "cudaProfilerApi range (profiling.type nsys), and nsys-time ends its capture after "
            "duration_secs; remove it, or set profiling.type: nsys",
        )
    if "trtllm" in engines and kind != "torch" and ctx.has_raw("profiling", "nsys_trace"):
        yield ctx.issue(
            "$.profiling.nsys_trace",
            "the trtllm engine is always traced with -t cuda,nvtx,ucx, so profiling.nsys_trace "
            f"({_raw(ctx, 'nsys_trace')}) would be ignored; remove it (or add other trace "
            "options with extra_nsys_args)",
        )


def _timed_window(ctx: Context) -> Iterator[Issue]:
    prof = ctx.recipe.profiling
    assert prof.delay_secs is not None and prof.duration_secs is not None
    window = prof.delay_secs + prof.duration_secs
    kind = ctx.recipe.benchmark.type
    if kind != "sa-bench":
        if ctx.has_raw("profiling", "benchmark_duration_secs"):
            yield ctx.issue(
                "$.profiling.benchmark_duration_secs",
                f"profiling.benchmark_duration_secs ({prof.benchmark_duration_secs}) lengthens "
                f"sa-bench's traffic; benchmark.type {kind} sends its own, which srt cannot "
                f"lengthen; remove it and size the benchmark to last at least delay_secs + "
                f"duration_secs ({window} s)",
            )
        return
    if prof.benchmark_duration_secs < window:
        yield ctx.issue(
            "$.profiling.benchmark_duration_secs",
            f"benchmark_duration_secs {prof.benchmark_duration_secs} does not cover the "
            f"capture window (delay_secs {prof.delay_secs} + duration_secs "
            f"{prof.duration_secs} = {window}); set it to at least {window}",
        )


#: Engines that honour a profiling step window: SGLang and vLLM take it in the start-profile
#: request the benchmark sends, TRT-LLM reads it from TLLM_PROFILE_START_STOP (nsys only).
_STEP_WINDOW_ENGINES = frozenset({"sglang", "vllm", "trtllm"})


def _step_windows(
    ctx: Context, phases: dict[str, ProfilingPhaseConfig | None], engines: set[str]
) -> Iterator[Issue]:
    prof = ctx.recipe.profiling
    for phase, config in phases.items():
        if config is None:
            continue
        base = f"$.profiling.{phase}"
        start, stop = config.start_step, config.stop_step
        if start is not None and start < 0:
            yield ctx.issue(f"{base}.start_step", f"must be at least 0; got {start}")
        if start is not None and stop is not None and stop <= start:
            yield ctx.issue(
                f"{base}.stop_step",
                f"stop_step {stop} must be greater than start_step {start} (the window "
                "profiles steps start_step .. stop_step - 1)",
            )
        if start is None and stop is None:
            continue
        if prof.type == "nsys-time":
            yield ctx.issue(
                f"{base}.start_step",
                "profiling.type nsys-time is bounded by delay_secs and duration_secs; remove "
                "start_step and stop_step, or use profiling.type nsys for a step window",
            )
        others = sorted(engines - _STEP_WINDOW_ENGINES)
        if others:
            yield ctx.issue(
                f"{base}.start_step",
                f"the {', '.join(others)} engine takes no start/stop-profile requests, so a "
                "step window would not bound the capture; remove start_step and stop_step and "
                "bound it with profiling.type nsys-time (delay_secs, duration_secs)",
            )


def _exporter(ctx: Context, path: str, exporter: TelemetryExporterConfig) -> Iterator[Issue]:
    if not exporter.container_image and not exporter.binary:
        yield ctx.issue(path, "an exporter needs a container_image or a binary")
    if not 1 <= exporter.port <= 65535:
        yield ctx.issue(f"{path}.port", f"must be a port in 1..65535; got {exporter.port}")


def observability(ctx: Context) -> Iterator[Issue]:
    obs = ctx.recipe.observability
    nsys = obs.nsys
    if nsys.capture_window not in ("measured_workload", "including_startup"):
        yield ctx.issue(
            "$.observability.nsys.capture_window",
            "use measured_workload or including_startup",
        )
    if nsys.cpu_sampling not in ("system-wide", "process-tree", "none"):
        yield ctx.issue(
            "$.observability.nsys.cpu_sampling", "use system-wide, process-tree or none"
        )
    if nsys.report_timeout_secs <= 0:
        yield ctx.issue("$.observability.nsys.report_timeout_secs", "must be greater than 0")
    if nsys.nvtx_injection_path is not None and not nsys.nvtx_injection_path.startswith("/"):
        yield ctx.issue("$.observability.nsys.nvtx_injection_path", "must be an absolute path")
    if (
        obs.enabled
        and nsys.enabled
        and nsys.capture_window == "measured_workload"
        and ctx.recipe.benchmark.type not in _MEASURED_WORKLOAD_TYPES
    ):
        yield ctx.issue(
            "$.observability.nsys.capture_window",
            f"measured_workload capture needs a benchmark of type "
            f"{', '.join(_MEASURED_WORKLOAD_TYPES)}; got '{ctx.recipe.benchmark.type}'",
        )
    tach = obs.tachometer
    base = "$.observability.tachometer"
    if tach.dcgm_exporter is not None and ctx.recipe.telemetry.dcgm_exporter is not None:
        yield ctx.issue(
            f"{base}.dcgm_exporter",
            "telemetry brings its own DCGM exporter; drop observability.tachometer.dcgm_exporter",
        )
    if tach.storage_subdir == ctx.recipe.telemetry.storage_subdir:
        yield ctx.issue(
            f"{base}.storage_subdir",
            "must differ from telemetry.storage_subdir; each writes its own files",
        )
    problem = safe_subdir_problem(tach.storage_subdir)
    if problem:
        yield ctx.issue(f"{base}.storage_subdir", problem)
    for name, exporter in (
        ("default_gpu_exporter", tach.default_gpu_exporter),
        ("dcgm_exporter", tach.dcgm_exporter),
        ("node_exporter", tach.node_exporter),
        ("process_exporter", tach.process_exporter),
    ):
        if exporter is not None:
            yield from _exporter(ctx, f"{base}.{name}", exporter)
    if not tach.binary_path:
        yield ctx.issue(f"{base}.binary_path", "must not be empty")
    if tach.collect_interval_ms <= 0:
        yield ctx.issue(f"{base}.collect_interval_ms", "must be greater than 0")
    if tach.sync_interval_secs < 0:
        yield ctx.issue(f"{base}.sync_interval_secs", "must be at least 0")
    if tach.compaction_threads < 0:
        yield ctx.issue(f"{base}.compaction_threads", "must be at least 0")


def telemetry(ctx: Context) -> Iterator[Issue]:
    tel = ctx.recipe.telemetry
    cpu = tel.cpu_power
    base = "$.telemetry"
    if cpu.required and not cpu.enabled:
        yield ctx.issue(
            f"{base}.cpu_power.required",
            "telemetry.cpu_power.required has no effect unless telemetry.cpu_power.enabled",
        )
    if cpu.source != "auto" and not cpu.enabled:
        yield ctx.issue(
            f"{base}.cpu_power.source",
            "telemetry.cpu_power.source has no effect unless telemetry.cpu_power.enabled",
        )
    if not tel.enabled:
        if cpu.enabled:
            yield ctx.issue(
                f"{base}.cpu_power.enabled",
                "telemetry.cpu_power.enabled requires telemetry.enabled",
            )
        return
    if tel.dcgm_exporter is None and tel.cpu_power_exporter is None and not cpu.enabled:
        yield ctx.issue(
            base,
            "telemetry.enabled requires telemetry.dcgm_exporter, telemetry.cpu_power_exporter, "
            "or telemetry.cpu_power.enabled; otherwise there is nothing to collect",
        )
    if tel.dcgm_exporter is not None:
        yield from _exporter(ctx, f"{base}.dcgm_exporter", tel.dcgm_exporter)
        if not 0 < tel.collect_interval_ms <= 3000:
            yield ctx.issue(
                f"{base}.collect_interval_ms",
                f"must be in 1..3000 (the 3 s sample-gap limit); got {tel.collect_interval_ms}",
            )
        btype = ctx.recipe.benchmark.type
        if btype not in _DCGM_BENCHMARKS:
            yield ctx.issue(
                f"{base}.enabled",
                f"GPU power telemetry supports benchmark types {', '.join(_DCGM_BENCHMARKS)}; "
                f"got '{btype}'",
            )
        if ctx.recipe.benchmark.placement.node != "head":
            yield ctx.issue(
                "$.benchmark.placement.node", "telemetry requires benchmark.placement.node: head"
            )
    if not (math.isfinite(tel.startup_timeout_seconds) and tel.startup_timeout_seconds > 0):
        yield ctx.issue(f"{base}.startup_timeout_seconds", "must be a finite number above 0")
    if not (math.isfinite(tel.request_timeout_seconds) and tel.request_timeout_seconds > 0):
        yield ctx.issue(f"{base}.request_timeout_seconds", "must be a finite number above 0")
    join = tel.collector_join_timeout_seconds
    floor = 2 * (2 * tel.request_timeout_seconds + 1)
    if join is not None and not join > floor:
        yield ctx.issue(
            f"{base}.collector_join_timeout_seconds",
            f"must be greater than {floor:g} (2 x (2 x request_timeout_seconds + 1))",
        )
    for path, sub in ((f"{base}.storage_subdir", tel.storage_subdir),):
        problem = safe_subdir_problem(sub)
        if problem:
            yield ctx.issue(path, problem)
    if cpu.enabled:
        if not 0 < cpu.sample_interval_seconds <= 3.0:
            yield ctx.issue(f"{base}.cpu_power.sample_interval_seconds", "must be in (0, 3]")
        if cpu.startup_timeout_seconds <= 0:
            yield ctx.issue(f"{base}.cpu_power.startup_timeout_seconds", "must be above 0")
        problem = safe_subdir_problem(cpu.storage_subdir)
        if problem:
            yield ctx.issue(f"{base}.cpu_power.storage_subdir", problem)
        if cpu.storage_subdir == tel.storage_subdir:
            yield ctx.issue(
                f"{base}.cpu_power.storage_subdir",
                "telemetry.cpu_power.storage_subdir must differ from telemetry.storage_subdir; "
                "the two legs write their own samples and manifest",
            )
    exporter = tel.cpu_power_exporter
    if exporter is not None:
        if not 1 <= exporter.port <= 65535:
            yield ctx.issue(f"{base}.cpu_power_exporter.port", "must be a port in 1..65535")
        taken = {9401, 9101}
        if tel.dcgm_exporter is not None:
            taken.add(tel.dcgm_exporter.port)
        if exporter.port in taken:
            yield ctx.issue(
                f"{base}.cpu_power_exporter.port",
                f"port {exporter.port} is already used by a DCGM or node exporter",
            )


# reporting.status.logging-stream-interval: its range is in registry.FIELD_BOUNDS
RULES = (profiling, observability, telemetry)
