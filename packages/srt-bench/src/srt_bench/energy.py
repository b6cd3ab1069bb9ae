"""`srt-bench energy`: energy per concurrency into `benchmark-rollup.json`
(docs/telemetry-and-bench.md#rollup).

Run after power finalization. Reads the GPU power folder srt-telemetry wrote (`manifest.json`,
`energy.json`, `cpu/samples.csv`) and leg A's `<cpu_power_dir>/samples.csv`, adds
`srt_schema.rollup.RunEnergy` to every run whose (benchmark type, concurrency) has a window in
`energy.json`, sets `Rollup.power` (the manifest's verdict, or why there is none) and rewrites the
file atomically. The result depends only on the inputs: running it twice gives the same bytes.

srt-bench must not import srt-telemetry, so the few fields read here have their own decoders
(unknown fields ignored); `tests/test_contract.py` decodes srt-telemetry's real files with them.

`build_*` and `merge_energy` are pure; `read_power_inputs` and `apply_energy` do the file I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from srt_bench.cpu_energy import CpuSeries, cpu_window_energy, read_cpu_totals
from srt_bench.errors import BenchPowerFileError
from srt_bench.rollup_file import read_file, read_rollup, write_rollup
from srt_schema.rollup import (
    ROLLUP_FILE,
    PowerSummary,
    Rollup,
    RollupRun,
    RunEnergy,
)

__all__ = [
    "NO_VALIDATION",
    "EnergyOutcome",
    "ManifestView",
    "PowerInputs",
    "WindowEnergyView",
    "WindowValidationView",
    "apply_energy",
    "build_power_summary",
    "build_run_energy",
    "decode_energy_report",
    "decode_manifest",
    "merge_energy",
    "read_power_inputs",
]

#: Reason code: the manifest has no validation row for a window that `energy.json` has.
NO_VALIDATION = "power_window_validation_missing"


class WindowValidationView(msgspec.Struct, frozen=True, kw_only=True):
    benchmark_type: str
    concurrency: int
    power_coverage_valid: bool
    reason_codes: tuple[str, ...] = ()


class ManifestView(msgspec.Struct, frozen=True, kw_only=True):
    """The fields of srt-telemetry's `manifest.json` the rollup carries."""

    status: str
    publication_valid: bool
    required: bool | None = None
    reason_codes: tuple[str, ...] = ()
    window_validations: tuple[WindowValidationView, ...] = ()


class WindowEnergyView(msgspec.Struct, frozen=True, kw_only=True):
    """One window of srt-telemetry's `energy.json`."""

    benchmark_type: str
    concurrency: int
    start_unix: float
    end_unix: float
    duration_seconds: float
    energy_joules: float | None
    avg_power_w: float | None
    total_output_tokens: int | None = None
    joules_per_output_token: float | None = None
    per_device_joules: dict[str, float] = {}


class _EnergyReportView(msgspec.Struct, frozen=True, kw_only=True):
    windows: tuple[WindowEnergyView, ...]


_T = TypeVar("_T")
#: (benchmark type, concurrency): how runs, windows and validations are matched.
_Key = tuple[str, int | None]


def _decode(data: bytes, kind: type[_T], *, source: str, what: str) -> _T:
    try:
        return msgspec.json.decode(data, type=kind)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise BenchPowerFileError(f"{source}: not {what}: {exc}; fix or remove the file") from exc


def decode_manifest(data: bytes, *, source: str) -> ManifestView:
    """`BenchPowerFileError` names the file and the bad `$.path`."""
    return _decode(data, ManifestView, source=source, what="a GPU power manifest")


def decode_energy_report(data: bytes, *, source: str) -> tuple[WindowEnergyView, ...]:
    """The windows of `energy.json`; one (benchmark type, concurrency) twice is an error."""
    windows = _decode(data, _EnergyReportView, source=source, what="a power energy report").windows
    seen: set[tuple[str, int]] = set()
    for i, w in enumerate(windows):
        key = (w.benchmark_type, w.concurrency)
        if key in seen:
            raise BenchPowerFileError(
                f"{source}: not a power energy report: window {key[0]} concurrency {key[1]} "
                f"appears twice - at `$.windows[{i}]`; fix or remove the file"
            )
        seen.add(key)
    return windows


@dataclass(frozen=True, slots=True)
class PowerInputs:
    """What the power folders hold. `missing` says why there is no energy at all."""

    manifest: ManifestView | None
    windows: tuple[WindowEnergyView, ...]
    cpu_sources: tuple[CpuSeries, ...]
    missing: str | None


def _read(path: Path) -> bytes | None:
    return read_file(path, BenchPowerFileError)


def _shown(path: Path, log_dir: Path) -> str:
    try:
        return str(path.relative_to(log_dir))
    except ValueError:
        return str(path)


def read_power_inputs(log_dir: Path, power_dir: Path, cpu_power_dir: Path) -> PowerInputs:
    """Read the manifest, `energy.json` and (only when there are windows) both CPU CSVs; each
    may be missing."""
    manifest_path = power_dir / "manifest.json"
    manifest_data = _read(manifest_path)
    if manifest_data is None:
        missing = f"{_shown(manifest_path, log_dir)} not found: GPU power was not captured"
        return PowerInputs(manifest=None, windows=(), cpu_sources=(), missing=missing)
    manifest = decode_manifest(manifest_data, source=str(manifest_path))
    energy_path = power_dir / "energy.json"
    energy_data = _read(energy_path)
    if energy_data is None:
        missing = (
            f"{_shown(energy_path, log_dir)} not found: no energy per window "
            f"(power finalization did not write it; status {manifest.status})"
        )
        return PowerInputs(manifest=manifest, windows=(), cpu_sources=(), missing=missing)
    windows = decode_energy_report(energy_data, source=str(energy_path))
    legs = (cpu_power_dir / "samples.csv", power_dir / "cpu" / "samples.csv") if windows else ()
    cpu = tuple(s for s in map(read_cpu_totals, legs) if s is not None)
    return PowerInputs(manifest=manifest, windows=windows, cpu_sources=cpu, missing=None)


def build_power_summary(inputs: PowerInputs) -> PowerSummary:
    m = inputs.manifest
    if m is None:
        return PowerSummary(
            publication_valid=False,
            status=None,
            required=None,
            reason_codes=(),
            missing=inputs.missing,
        )
    return PowerSummary(
        publication_valid=m.publication_valid,
        status=m.status,
        required=m.required,
        reason_codes=m.reason_codes,
        missing=inputs.missing,
    )


def _ratio(joules: float | None, tokens: float | None) -> float | None:
    if joules is None or tokens is None or isinstance(tokens, bool) or not tokens > 0:
        return None
    value = joules / tokens
    return value if math.isfinite(value) else None


def _tokens(*counts: int | float | None) -> float | None:
    if any(c is None for c in counts):
        return None
    return sum(c for c in counts if c is not None)


def _per_node(per_gpu: Mapping[str, float]) -> dict[str, float]:
    nodes: dict[str, list[float]] = {}
    for key in sorted(per_gpu):
        nodes.setdefault(key.rpartition("/")[0] or key, []).append(per_gpu[key])
    return {host: math.fsum(values) for host, values in sorted(nodes.items())}


def build_run_energy(
    run: RollupRun,
    window: WindowEnergyView,
    validation: WindowValidationView | None,
    cpu_sources: Sequence[CpuSeries],
) -> RunEnergy:
    """One run's energy (pure). Per-token figures use the rollup's token counts (`energy.json`'s
    J per output token only when the rollup has no output count)."""
    gpu = window.energy_joules
    per_output = _ratio(gpu, run.total_output_tokens)
    if run.total_output_tokens is None:
        per_output = window.joules_per_output_token
    cpu = cpu_window_energy(cpu_sources, window.start_unix, window.end_unix)
    reasons = validation.reason_codes if validation is not None else (NO_VALIDATION,)
    return RunEnergy(
        gpu_energy_joules=gpu,
        gpu_avg_power_w=window.avg_power_w,
        joules_per_output_token=per_output,
        joules_per_total_token=_ratio(
            gpu, _tokens(run.total_input_tokens, run.total_output_tokens)
        ),
        per_gpu_joules=dict(sorted(window.per_device_joules.items())),
        per_node_joules=_per_node(window.per_device_joules),
        cpu_energy_joules=cpu.total,
        per_node_cpu_joules=cpu.per_node,
        power_coverage_valid=validation.power_coverage_valid if validation is not None else False,
        reason_codes=tuple(dict.fromkeys((*reasons, *cpu.reasons))),
    )


def merge_energy(
    document: Mapping[str, Any], rollup: Rollup, inputs: PowerInputs
) -> tuple[dict[str, Any], int]:
    """The rollup document with `energy` on each run that has a window and `power` set (pure).
    `document` is the decoded file and `rollup` the same file as structs: fields the structs do
    not know are kept. Earlier `energy`/`power` keys are replaced, so the result depends only on
    the inputs. Returns the new document and how many runs got energy."""
    windows: dict[_Key, WindowEnergyView] = {
        (w.benchmark_type, w.concurrency): w for w in inputs.windows
    }
    checks: dict[_Key, WindowValidationView] = {}
    if inputs.manifest is not None:
        checks = {(v.benchmark_type, v.concurrency): v for v in inputs.manifest.window_validations}
    runs: list[dict[str, Any]] = []
    count = 0
    for raw, run in zip(document.get("runs", ()), rollup.runs, strict=True):
        new = {k: v for k, v in raw.items() if k != "energy"}
        key: _Key = (rollup.benchmark_type, run.concurrency)
        window = windows.get(key)
        if window is not None:
            energy = build_run_energy(run, window, checks.get(key), inputs.cpu_sources)
            new["energy"] = msgspec.to_builtins(energy)
            count += 1
        runs.append(new)
    out = {k: v for k, v in document.items() if k != "power"}
    if "runs" in out:
        out["runs"] = runs
    out["power"] = msgspec.to_builtins(build_power_summary(inputs))
    return out, count


@dataclass(frozen=True, slots=True)
class EnergyOutcome:
    path: Path
    runs_with_energy: int
    publication_valid: bool
    missing: str | None
    changed: bool


def apply_energy(log_dir: Path, power_dir: Path, cpu_power_dir: Path) -> EnergyOutcome | None:
    """Merge energy into `<log_dir>/benchmark-rollup.json`; None when there is no rollup."""
    path = log_dir / ROLLUP_FILE
    read = read_rollup(path, BenchPowerFileError)
    if read is None:
        return None
    data, rollup, document = read
    inputs = read_power_inputs(log_dir, power_dir, cpu_power_dir)
    merged, count = merge_energy(document, rollup, inputs)
    changed = write_rollup(path, merged, data)
    return EnergyOutcome(
        path=path,
        runs_with_energy=count,
        publication_valid=inputs.manifest is not None and inputs.manifest.publication_valid,
        missing=inputs.missing,
        changed=changed,
    )
