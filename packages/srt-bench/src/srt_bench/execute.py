"""Carry out a `Plan` (the thin shell around the pure builders)."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, assert_never

import msgspec

from srt_bench.capacity.run import read_capacity, run_capacity
from srt_bench.config import BenchRunConfig
from srt_bench.errors import BenchDatasetError, BenchError
from srt_bench.plans import CapacityPlan, CommandPlan, EvalPlan, ManualPlan, Plan, SaBenchPlan
from srt_bench.profile_control import mark, start_profiles, stop_profiles
from srt_bench.rollup import (
    GpuCounts,
    build_aiperf_runs,
    build_rollup_csv,
    build_sa_bench_rollup,
    nearest_rank,
    read_running_requests,
    read_sa_bench_results,
    sglang_result_as_sa_bench,
    write_rollup,
)
from srt_bench.runners.router_bench import FOLDER as ROUTER_FOLDER
from srt_bench.runners.router_bench import SUMMARY_FILE, encode_summary, router_summary
from srt_bench.sa_bench import run_sa_bench
from srt_schema.rollup import Rollup, RollupConfig
from srt_schema.timestamps import iso_micros_z

__all__ = ["run_plan", "write_sa_bench_rollup"]

Log = Callable[[str], None]
EXIT_NOT_FOUND = 127


def _gpus(config: BenchRunConfig) -> GpuCounts:
    return GpuCounts(
        total=config.total_gpus, prefill=config.prefill_gpus, decode=config.decode_gpus
    )


def _write_with_csv(config: BenchRunConfig, out_dir: Path, rollup: Rollup) -> Path:
    gpus = _gpus(config)
    p90 = nearest_rank(read_running_requests(out_dir), 90.0) if gpus.disaggregated else None
    csv_text = build_rollup_csv(
        rollup, config_name=config.job_name or config.model_name, gpus=gpus, p90_running=p90
    )
    return write_rollup(out_dir, rollup, csv_text)


def write_sa_bench_rollup(config: BenchRunConfig, out_dir: Path, now: dt.datetime) -> Path | None:
    """Roll up every sa-bench result under `out_dir`; None when there is none."""
    results = read_sa_bench_results(out_dir)
    if not results:
        return None
    b = config.benchmark
    custom = b.dataset_name == "custom"
    isl, osl = (None, None) if custom else (b.isl, b.osl)
    if config.workload is not None:
        # the lengths the workload's results report (a shared prefix's isl is prefix + suffix)
        isl, osl = results[0].isl, results[0].osl
    rollup = build_sa_bench_rollup(
        results,
        isl=isl,
        osl=osl,
        timestamp=iso_micros_z(now),
    )
    capacity = read_capacity(out_dir)  # a capacity search's record, beside its results
    if capacity is not None:
        rollup = msgspec.structs.replace(rollup, capacity=capacity)
    return _write_with_csv(config, out_dir, rollup)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        doc = msgspec.json.decode(path.read_bytes())
    except (OSError, msgspec.DecodeError) as exc:
        raise BenchDatasetError(f"cannot read aiperf output {path}: {exc}") from exc
    if not isinstance(doc, dict):
        raise BenchDatasetError(f"{path}: expected a JSON object")
    return doc


def _last_json_line(path: Path) -> dict[str, Any] | None:
    """The last run `sglang.bench_serving --output-file` appended (None: no file)."""
    if not path.is_file():
        return None
    lines = [line for line in path.read_bytes().splitlines() if line.strip()]
    if not lines:
        return None
    try:
        # Python's json: SGLang writes `"request_rate": Infinity` for `inf`
        doc = json.loads(lines[-1])
    except ValueError as exc:
        raise BenchDatasetError(f"{path}: the last line is not JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise BenchDatasetError(f"{path}: expected a JSON object per line")
    return doc


def _newest_export(folder: Path) -> Path | None:
    found = sorted(folder.rglob("profile_export_aiperf.json"), key=lambda p: p.stat().st_mtime)
    return found[-1] if found else None


def _fold(
    plan: CommandPlan, config: BenchRunConfig, out_dir: Path, now: dt.datetime
) -> Path | None:
    match plan.fold:
        case "none":
            return None
        case "aiperf-embed":
            export = _newest_export(Path(plan.artifacts[0]))
            if export is None:
                return None
            embedded = Rollup(
                benchmark_type=plan.benchmark_type,
                timestamp=iso_micros_z(now),
                config=plan.rollup_config or RollupConfig(model=None, isl=None, osl=None),
                data=_read_json(export),
            )
            return write_rollup(out_dir, embedded, None)
        case "aiperf-per-concurrency":
            exports: dict[int, dict[str, Any]] = {}
            for c, folder in plan.artifacts.items():
                export = _newest_export(Path(folder))
                if export is not None:
                    exports[c] = _read_json(export)
            if not exports:
                return None
            rollup = Rollup(
                benchmark_type=plan.benchmark_type,
                timestamp=iso_micros_z(now),
                config=RollupConfig(
                    model=config.model_name, isl=config.benchmark.isl, osl=config.benchmark.osl
                ),
                runs=build_aiperf_runs(exports),
            )
            return _write_with_csv(config, out_dir, rollup)
        case "sglang-per-concurrency":
            docs = [d for f in plan.artifacts.values() if (d := _last_json_line(Path(f)))]
            if not docs:
                return None
            rollup = build_sa_bench_rollup(
                # its result lines do not name the model: the served name asked for
                [sglang_result_as_sa_bench(d, model=config.model_name) for d in docs],
                isl=config.benchmark.isl,
                osl=config.benchmark.osl,
                timestamp=iso_micros_z(now),
                benchmark_type=plan.benchmark_type,
            )
            return _write_with_csv(config, out_dir, rollup)
        case "router-prefix-ratios":
            assert plan.router is not None, "a router-prefix-ratios fold carries its sweep"
            found = {i: _newest_export(Path(folder)) for i, folder in plan.artifacts.items()}
            exports = {i: _read_json(path) for i, path in found.items() if path is not None}
            summary = router_summary(plan.router, exports)
            if summary is None:
                return None
            summary_dir = out_dir / ROUTER_FOLDER
            summary_dir.mkdir(parents=True, exist_ok=True)
            (summary_dir / SUMMARY_FILE).write_bytes(encode_summary(summary))
            embedded = Rollup(
                benchmark_type=plan.benchmark_type,
                timestamp=iso_micros_z(now),
                config=plan.rollup_config or RollupConfig(model=None, isl=None, osl=None),
                data=summary,
            )
            return write_rollup(out_dir, embedded, None)
        case _:
            assert_never(plan.fold)


def _run_commands(plan: CommandPlan, log: Log) -> int:
    for command in plan.commands:
        for folder in command.mkdirs:
            Path(folder).mkdir(parents=True, exist_ok=True)
        log("$ " + subprocess.list2cmdline(command.argv))
        try:
            completed = subprocess.run(
                command.argv, env={**os.environ, **command.env}, cwd=command.cwd, check=False
            )
        except FileNotFoundError as exc:
            err = BenchError(
                f"{plan.benchmark_type}: cannot start {command.argv[0]!r}: not found on PATH; "
                "install it in the benchmark container"
            )
            err.exit_code = EXIT_NOT_FOUND
            raise err from exc
        if completed.returncode != 0:
            log(f"{plan.benchmark_type}: {command.argv[0]} exited with {completed.returncode}")
            return completed.returncode
    return 0


def _run_phases(
    config: BenchRunConfig,
    out_dir: Path,
    phases: Callable[[], object],
    *,
    log: Log,
    now: Callable[[], dt.datetime],
) -> None:
    """sa-bench phases (a fixed list or a capacity search) between the profile start/stop
    requests; the rollup is written whatever happens."""
    profiling = config.profiling
    if profiling is not None:
        start_profiles(profiling, log)
    try:
        phases()
    finally:
        if profiling is not None:
            stop_profiles(profiling, log)
        path = write_sa_bench_rollup(config, out_dir, now())
        if path is not None:
            log(f"rollup: {path}")


def run_plan(
    plan: Plan,
    config: BenchRunConfig,
    out_dir: Path,
    *,
    log: Log,
    stop: threading.Event,
    window_dir: Path | None = None,
    now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
) -> int:
    """Run the plan; returns the exit code (errors of this package propagate as `BenchError`)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    profiling = config.profiling
    match plan:
        case SaBenchPlan(settings=settings):
            _run_phases(
                config,
                out_dir,
                lambda: run_sa_bench(config, settings, out_dir, window_dir=window_dir, log=log),
                log=log,
                now=now,
            )
            return 0
        case CapacityPlan(settings=settings, spec=spec):
            _run_phases(
                config,
                out_dir,
                lambda: run_capacity(
                    config, settings, spec, out_dir, window_dir=window_dir, log=log
                ),
                log=log,
                now=now,
            )
            return 0
        case CommandPlan():
            if profiling is not None:
                start_profiles(profiling, log)
            mark(profiling, "start", log)
            try:
                rc = _run_commands(plan, log)
            finally:
                mark(profiling, "stop", log)
                if profiling is not None:
                    stop_profiles(profiling, log)
            path = _fold(plan, config, out_dir, now())
            if path is not None:
                log(f"rollup: {path}")
            return rc
        case EvalPlan():
            from srt_bench.evals.run import run_eval

            return run_eval(plan, config, out_dir, log=log)
        case ManualPlan():
            log("manual: no client; serving until stopped")
            stop.wait()
            log("manual: stop requested")
            return 0
        case _:
            assert_never(plan)
