"""Offline re-check of a finished GPU power capture (`srt-telemetry power validate`).

Recomputes every disk-derived claim (samples.csv, windows/, result files) from the stored
manifest's expected devices and windows, and requires the stored verdict to agree: the same
disk-derived reason codes, the same per-window reasons, the same artifact errors, the same
`publication_valid`. Runtime-only reason codes are taken as stored but must be known codes.
Passes only when the recomputed capture is publishable, the stored verdict says so, and they agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from srt_telemetry.config import PowerConfig
from srt_telemetry.power_finalize import evaluate_power
from srt_telemetry.power_manifest import CollectorState, Manifest
from srt_telemetry.reasons import CSV_READ, REASON_CODES

__all__ = ["DISK_DERIVED", "Validation", "validate_power"]

DISK_DERIVED = CSV_READ | {
    "expected_device_missing",
    "unexpected_device",
    "gpu_uuid_changed",
    "conflicting_worker_roles",
    "conflicting_het_groups",
}


@dataclass
class Validation:
    ok: bool = False
    failures: list[str] = field(default_factory=list)


def validate_power(power_dir: Path, result_root: Path, expect_roles: dict[str, int]) -> Validation:
    out = Validation()
    path = power_dir / "manifest.json"
    try:
        stored = msgspec.json.decode(path.read_bytes(), type=Manifest)
    except (OSError, msgspec.DecodeError) as exc:
        out.failures.append(f"{path}: cannot read the manifest: {exc}")
        return out
    known = set(REASON_CODES)
    every = [
        *stored.reason_codes,
        *(r for v in stored.window_validations for r in v.reason_codes),
        *(r for e in stored.artifact_errors for r in e.reason_codes),
    ]
    for code in dict.fromkeys(every):
        if code not in known:
            out.failures.append(f"{path}: unknown reason code {code!r}")
    config = PowerConfig(
        power_dir=str(power_dir),
        result_root=str(result_root),
        endpoints=(),
        expected_devices=tuple(stored.expected_devices),
        expected_windows=tuple(stored.expected_windows),
        required=stored.required,
    )
    state = CollectorState(
        status="stopped",
        started_at_unix=stored.started_at_unix or 0.0,
        stopped_at_unix=stored.stopped_at_unix,
        scrape_count=stored.scrape_count,
        reason_codes=[r for r in stored.reason_codes if r not in DISK_DERIVED],
        # runtime-only like the reasons: the offsets of the nodes the clock check failed
        clock_offsets={f.hostname: f.offset_seconds for f in stored.clock_sync_failures},
    )
    again, _ = evaluate_power(config, state, [], convert_running=False)
    stored_disk = sorted(r for r in stored.reason_codes if r in DISK_DERIVED)
    again_disk = sorted(r for r in again.reason_codes if r in DISK_DERIVED)
    if stored_disk != again_disk:
        out.failures.append(f"disk-derived reasons: stored {stored_disk}, recomputed {again_disk}")
    s_win = {(v.benchmark_type, v.concurrency): v.reason_codes for v in stored.window_validations}
    a_win = {(v.benchmark_type, v.concurrency): v.reason_codes for v in again.window_validations}
    for key in sorted(set(s_win) | set(a_win)):
        if s_win.get(key) != a_win.get(key):
            out.failures.append(
                f"window {key[0]} c={key[1]}: stored {s_win.get(key)}, recomputed {a_win.get(key)}"
            )
    s_art = sorted((e.path, tuple(e.reason_codes)) for e in stored.artifact_errors)
    a_art = sorted((e.path, tuple(e.reason_codes)) for e in again.artifact_errors)
    if s_art != a_art:
        out.failures.append(f"artifact errors: stored {s_art}, recomputed {a_art}")
    if stored.sample_row_count != again.sample_row_count:
        out.failures.append(
            f"sample_row_count: stored {stored.sample_row_count}, "
            f"samples.csv has {again.sample_row_count}"
        )
    for role, want in sorted(expect_roles.items()):
        have = sum(
            1 for d in stored.expected_devices if any(a.worker_role == role for a in d.assignments)
        )
        if have != want:
            out.failures.append(f"role {role}: expected {want} GPUs, the manifest lists {have}")
    if stored.publication_valid != again.publication_valid:
        out.failures.append(
            f"publication_valid: stored {stored.publication_valid}, "
            f"recomputed {again.publication_valid}"
        )
    elif not again.publication_valid:
        out.failures.append(f"not publishable: reasons {again.reason_codes}")
    out.ok = not out.failures
    return out
