"""Finalization of a GPU power capture (`srt-telemetry power finalize`): devices, windows,
terminal status, `publication_valid`, per-window energy and the exit-code rule.

Facts only the runtime knows arrive as `RuntimeFacts` (CLI flags): whether the benchmark child
was reaped cleanly, force-killed, or could not be proven reaped; whether the run was interrupted
(signal or critical failure); whether an exporter process exited during collection.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import msgspec

from srt_telemetry.atomic import write_json_atomic
from srt_telemetry.config import ExpectedDevice, ExpectedWindow, PowerConfig
from srt_telemetry.power_clock import clock_checks, clock_sync_failures, clock_tolerance_seconds
from srt_telemetry.power_manifest import (
    ArtifactError,
    CollectorState,
    Manifest,
    ObservedDevice,
    WindowValidation,
    initial_manifest,
)
from srt_telemetry.power_samples import Sample, read_samples
from srt_telemetry.power_windows import (
    INTERRUPTED_REASON,
    WindowFile,
    audit_windows,
    check_coverage,
    energy_joules,
    read_windows,
)
from srt_telemetry.reasons import CSV_READ, OPERATIONAL, STARTUP, TERMINAL_INCOMPLETE, dedupe

__all__ = [
    "EnergyReport",
    "FinalizeResult",
    "RuntimeFacts",
    "WindowEnergy",
    "evaluate_power",
    "finalize_power",
]

BenchmarkReap = Literal["clean", "forced", "timeout"]


StartupFailure = Literal["exporter_launch_failed", "endpoint_resolution_failed"]


@dataclass(frozen=True, slots=True)
class RuntimeFacts:
    benchmark_reap: BenchmarkReap = "clean"
    interrupted: bool = False
    exporter_exited: bool = False
    startup_failures: tuple[StartupFailure, ...] = ()


class WindowEnergy(msgspec.Struct, kw_only=True):
    benchmark_type: str
    concurrency: int
    start_unix: float
    end_unix: float
    duration_seconds: float
    energy_joules: float | None
    avg_power_w: float | None
    total_output_tokens: int | None
    joules_per_output_token: float | None
    per_device_joules: dict[str, float]


class EnergyReport(msgspec.Struct, kw_only=True):
    schema_version: int = 1
    source: str = "samples.csv (trapezoidal, linear interpolation at window edges)"
    windows: list[WindowEnergy] = []


@dataclass(frozen=True, slots=True)
class FinalizeResult:
    manifest: Manifest
    exit_nonzero: bool
    energy: EnergyReport


def _read_state(path: Path, wait_seconds: float) -> CollectorState | None:
    """The collector's state once it says `stopped`, waiting up to `wait_seconds`."""
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            state = msgspec.json.decode(path.read_bytes(), type=CollectorState)
        except (OSError, msgspec.DecodeError):
            state = None
        if state is not None and state.status == "stopped":
            return state
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.05)


def _devices(
    expected: Sequence[ExpectedDevice], by_dev: dict[tuple[str, int], list[Sample]]
) -> tuple[list[ObservedDevice], list[str]]:
    reasons: list[str] = []
    observed = [
        ObservedDevice(
            hostname=h,
            gpu_index=g,
            gpu_uuids=list(dict.fromkeys(s.gpu_uuid for s in seq)),
            first_sample_time_unix=min(s.timestamp_unix for s in seq),
            last_sample_time_unix=max(s.timestamp_unix for s in seq),
        )
        for (h, g), seq in sorted(by_dev.items())
    ]
    exp = {(d.hostname, d.gpu_index) for d in expected}
    obs = set(by_dev)
    if not exp or not exp <= obs:
        reasons.append("expected_device_missing")
    if not obs <= exp:
        reasons.append("unexpected_device")
    owners: dict[str, set[tuple[str, int]]] = {}
    for dev in observed:
        if len(dev.gpu_uuids) > 1:
            reasons.append("gpu_uuid_changed")
        for u in dev.gpu_uuids:
            owners.setdefault(u, set()).add((dev.hostname, dev.gpu_index))
    if any(len(v) > 1 for v in owners.values()):
        reasons.append("gpu_uuid_changed")
    node_groups: dict[str, set[int | None]] = {}
    for d in expected:
        if len({(a.worker_role, a.worker_index, a.worker_process) for a in d.assignments}) > 1:
            reasons.append("conflicting_worker_roles")
        groups = {a.het_group for a in d.assignments}
        if len(groups) > 1:
            reasons.append("conflicting_het_groups")
        node_groups.setdefault(d.hostname, set()).update(groups)
    if any(len(g) > 1 for g in node_groups.values()):
        reasons.append("conflicting_het_groups")
    return observed, dedupe(reasons)


def _convert_running(files: Sequence[WindowFile], windows_dir: Path) -> None:
    for wf in files:
        if wf.window is not None and wf.window.status == "running" and wf.raw is not None:
            raw = dict(wf.raw)
            raw.update(status="interrupted", reason=INTERRUPTED_REASON)
            write_json_atomic(windows_dir / wf.name, raw)


def _result_times(path: Path) -> dict[str, object] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _output_tokens(result: dict[str, object]) -> int | None:
    for key in ("total_output_tokens", "total_output"):
        v = result.get(key)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
    return None


def _validate_windows(
    config: PowerConfig,
    files: Sequence[WindowFile],
    by_dev: dict[tuple[str, int], list[Sample]],
    energy: EnergyReport,
) -> tuple[list[WindowValidation], list[ArtifactError]]:
    """One validation row per expected window (+ the artifact errors of the audit)."""
    result_root = Path(config.result_root)
    audit = audit_windows(files, config.expected_windows)
    validations: list[WindowValidation] = []
    for ew in config.expected_windows:
        copies = audit.by_key.get((ew.benchmark_type, ew.concurrency), [])
        wr: list[str] = []
        gaps: dict[str, float] = {}
        if not copies:
            wr.append("measurement_window_missing")
        elif len(copies) > 1:
            wr.append("measurement_window_duplicate")
        else:
            wf = copies[0]
            w = wf.window
            assert w is not None  # the audit keys only decoded windows
            if wf.reason is not None:
                wr.append(wf.reason)
            if w.status != "completed":
                wr.append("measurement_window_incomplete")
            result = None if wf.reason else _result_times(result_root / w.result_path)
            if wf.reason is None and result is None:
                wr.append("measurement_window_result_missing")
            elif result is not None and (
                result.get("benchmark_start_time_unix") != w.start
                or result.get("benchmark_end_time_unix") != w.end
                or result.get("duration") != w.duration
            ):
                wr.append("measurement_window_result_mismatch")
            if w.end is not None and w.duration is not None:
                wall = w.end - w.start
                if wall <= 0 or abs(wall - w.duration) > max(0.5, 0.01 * w.duration):
                    wr.append("measurement_window_clock_mismatch")
                if wall > 0:
                    cov = check_coverage(w.start, w.end, config.expected_devices, by_dev)
                    wr.extend(cov.reasons)
                    gaps = cov.gaps
                    energy.windows.append(
                        _energy(
                            btype=ew.benchmark_type,
                            concurrency=ew.concurrency,
                            start=w.start,
                            end=w.end,
                            devices=config.expected_devices,
                            by_dev=by_dev,
                            result=result,
                        )
                    )
        wr = dedupe(wr)
        validations.append(
            WindowValidation(
                benchmark_type=ew.benchmark_type,
                concurrency=ew.concurrency,
                window_file=f"windows/{copies[0].name}" if len(copies) == 1 else None,
                power_coverage_valid=not wr,
                reason_codes=wr,
                per_device_max_sample_gap_seconds=gaps,
            )
        )
    errors = [ArtifactError(path=p, reason_codes=r) for p, r in audit.artifact_errors]
    return validations, errors


def _stamped_windows(
    files: Sequence[WindowFile], benchmark_type: str
) -> tuple[ExpectedWindow, ...]:
    """The windows a benchmark that picks its concurrencies as it runs has stamped (decoded
    ones of its type), one per concurrency in ascending order."""
    found = {
        wf.window.concurrency
        for wf in files
        if wf.window is not None and wf.window.benchmark_type == benchmark_type
    }
    return tuple(
        ExpectedWindow(benchmark_type=benchmark_type, concurrency=c) for c in sorted(found)
    )


def evaluate_power(
    config: PowerConfig,
    state: CollectorState,
    runtime_reasons: Sequence[str],
    *,
    convert_running: bool,
) -> tuple[Manifest, EnergyReport]:
    """Everything finalization derives from disk (samples.csv, windows, results) plus the
    runtime-only reasons. Writes nothing, except converting `running` windows to `interrupted`
    when `convert_running` (the benchmark child was reaped cleanly)."""
    power_dir = Path(config.power_dir)
    reasons = [*runtime_reasons, *state.reason_codes]
    manifest = initial_manifest(config, started_at=state.started_at_unix)
    manifest.stopped_at_unix = state.stopped_at_unix
    manifest.scrape_count = state.scrape_count
    manifest.max_scrape_duration_seconds = state.max_scrape_duration_seconds
    csv_read = read_samples(power_dir / "samples.csv")
    reasons.extend(csv_read.reasons)
    manifest.sample_row_count = len(csv_read.samples)
    by_dev: dict[tuple[str, int], list[Sample]] = {}
    for s in sorted(csv_read.samples, key=lambda s: (s.scrape_seq, s.timestamp_unix)):
        by_dev.setdefault((s.hostname, s.gpu_index), []).append(s)
    manifest.observed_devices, device_reasons = _devices(config.expected_devices, by_dev)
    reasons.extend(device_reasons)
    windows_dir = power_dir / "windows"
    files = read_windows(windows_dir, Path(config.result_root))
    if convert_running:
        _convert_running(files, windows_dir)
        files = read_windows(windows_dir, Path(config.result_root))
    if config.run_time_windows is not None and not config.expected_windows:
        config = msgspec.structs.replace(
            config, expected_windows=_stamped_windows(files, config.run_time_windows)
        )
        manifest.expected_windows = list(config.expected_windows)
    energy = EnergyReport()
    manifest.window_validations, manifest.artifact_errors = _validate_windows(
        config, files, by_dev, energy
    )
    tolerance = clock_tolerance_seconds(config)
    manifest.clock_tolerance_seconds = tolerance
    manifest.clock_checks = clock_checks(config.endpoints, state.clock_offsets, tolerance)
    manifest.clock_sync_failures = clock_sync_failures(state.clock_offsets, tolerance)
    if manifest.clock_sync_failures:
        reasons.append("clock_sync_unverified")
    reasons = dedupe(reasons)
    if any(r in TERMINAL_INCOMPLETE for r in reasons):
        manifest.status = "incomplete"
    elif config.required and any(r in STARTUP for r in reasons):
        manifest.status = "failed"
    else:
        manifest.status = "complete"
    manifest.publication_valid = (
        manifest.status == "complete"
        and not device_reasons
        and bool(manifest.window_validations)
        and all(v.power_coverage_valid for v in manifest.window_validations)
        and not any(r in CSV_READ for r in reasons)
        and not manifest.artifact_errors
        and not manifest.clock_sync_failures
    )
    manifest.reason_codes = reasons
    return manifest, energy


def finalize_power(config: PowerConfig, facts: RuntimeFacts) -> FinalizeResult:
    """Compute and write the terminal manifest (+ `energy.json`); decide the exit code."""
    power_dir = Path(config.power_dir)
    power_dir.mkdir(parents=True, exist_ok=True)
    reasons: list[str] = list(facts.startup_failures)
    if facts.benchmark_reap == "timeout":
        reasons.append("benchmark_child_reap_timeout")
    if facts.exporter_exited:
        reasons.append("exporter_exited")
    if facts.interrupted:
        reasons.append("collector_interrupted")
    state = _read_state(power_dir / "collector.json", config.join_timeout)
    if state is None:
        # the collector did not stop in time: a minimal terminal manifest, CSV not re-read
        reasons.append("collector_join_timeout")
        manifest = initial_manifest(config, started_at=None)
        manifest.status = "incomplete"
        manifest.reason_codes = dedupe(reasons)
        write_json_atomic(power_dir / "manifest.json", manifest)
        return FinalizeResult(manifest, True, EnergyReport())
    manifest, energy = evaluate_power(
        config, state, reasons, convert_running=facts.benchmark_reap == "clean"
    )
    try:
        old = msgspec.json.decode((power_dir / "manifest.json").read_bytes(), type=Manifest)
        manifest.dcgm_exporter = old.dcgm_exporter  # keeps the image digest taken at start
    except (OSError, msgspec.DecodeError):
        pass  # the collector never wrote one; keep the config's exporter block
    write_json_atomic(power_dir / "manifest.json", manifest)
    write_json_atomic(power_dir / "energy.json", energy)
    exit_nonzero = any(r in OPERATIONAL for r in manifest.reason_codes) or (
        config.required and not manifest.publication_valid
    )
    return FinalizeResult(manifest, exit_nonzero, energy)


def _energy(
    *,
    btype: str,
    concurrency: int,
    start: float,
    end: float,
    devices: Sequence[ExpectedDevice],
    by_dev: dict[tuple[str, int], list[Sample]],
    result: dict[str, object] | None,
) -> WindowEnergy:
    per: dict[str, float] = {}
    total: float | None = 0.0
    for d in devices:
        seq = by_dev.get((d.hostname, d.gpu_index), [])
        j = energy_joules(seq, start, end)
        if j is None:
            total = None
            continue
        per[f"{d.hostname}/{d.gpu_index}"] = round(j, 6)
        if total is not None:
            total += j
    tokens = _output_tokens(result) if result is not None else None
    dur = end - start
    return WindowEnergy(
        benchmark_type=btype,
        concurrency=concurrency,
        start_unix=start,
        end_unix=end,
        duration_seconds=dur,
        energy_joules=None if total is None else round(total, 6),
        avg_power_w=None if total is None else round(total / dur, 6),
        total_output_tokens=tokens,
        joules_per_output_token=(
            round(total / tokens, 9)
            if total is not None and tokens and math.isfinite(total)
            else None
        ),
        per_device_joules=per,
    )
