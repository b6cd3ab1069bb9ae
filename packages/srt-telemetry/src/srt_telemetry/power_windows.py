"""Measurement-window files (`windows/<stem>.json`): strict decoding, audit, power coverage and
per-window energy. Pure functions over data read by `read_windows` / `read_result_times`."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from srt_telemetry.config import ExpectedDevice, ExpectedWindow
from srt_telemetry.power_samples import Sample

__all__ = [
    "MAX_SAMPLE_GAP_SECONDS",
    "Window",
    "WindowAudit",
    "WindowFile",
    "audit_windows",
    "check_coverage",
    "decode_window",
    "energy_joules",
    "read_windows",
    "safe_relative",
]

MAX_SAMPLE_GAP_SECONDS = 3.0
INTERRUPTED_REASON = "benchmark did not reach a formal end boundary"
WindowStatus = Literal["running", "completed", "failed", "interrupted"]
_STATUSES = ("running", "completed", "failed", "interrupted")


@dataclass(frozen=True, slots=True)
class Window:
    benchmark_type: str
    result_path: str
    concurrency: int
    start: float
    end: float | None
    duration: float | None
    clock_source: str
    status: WindowStatus
    reason: str | None


@dataclass(slots=True)
class WindowFile:
    """One entry of `windows/`: its name, and either a decoded window or the reason it is bad."""

    name: str
    window: Window | None = None
    reason: str | None = None
    raw: dict[str, Any] | None = None


def _strict_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _num(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def safe_relative(path: str) -> bool:
    """Non-empty, relative, no `~`, no `..` and no empty parts."""
    if not path or path.startswith(("/", "~")) or "\\" in path:
        return False
    parts = path.split("/")
    return all(p not in ("", ".", "..") for p in parts)


def decode_window(raw: object) -> Window | None:
    """A `Window` if `raw` satisfies every invariant of its status, else None."""
    if not isinstance(raw, dict):
        return None
    sv, ct, status = raw.get("schema_version"), raw.get("concurrency"), raw.get("status")
    if not (_strict_int(sv) and sv == 1 and _strict_int(ct) and status in _STATUSES):
        return None
    btype, rpath, clock = raw.get("benchmark_type"), raw.get("result_path"), raw.get("clock_source")
    if not (isinstance(btype, str) and btype and isinstance(rpath, str) and isinstance(clock, str)):
        return None
    start, end, dur, reason = (
        raw.get("benchmark_start_time_unix"),
        raw.get("benchmark_end_time_unix"),
        raw.get("duration"),
        raw.get("reason"),
    )
    if not _num(start):
        return None
    match status:
        case "running":
            ok = end is None and dur is None and reason is None
        case "interrupted":
            ok = end is None and dur is None and isinstance(reason, str) and bool(reason)
        case "completed":
            ok = _num(end) and _num(dur) and dur > 0 and reason is None  # type: ignore[operator]
        case "failed":
            ok = _num(end) and _num(dur) and dur > 0 and isinstance(reason, str) and bool(reason)  # type: ignore[operator]
        case _:
            ok = False
    if not ok:
        return None
    return Window(
        benchmark_type=btype,
        result_path=rpath,
        concurrency=int(ct),  # type: ignore[arg-type]
        start=float(start),  # type: ignore[arg-type]
        end=None if end is None else float(end),
        duration=None if dur is None else float(dur),
        clock_source=clock,
        status=status,
        reason=reason,
    )


def read_windows(windows_dir: Path, result_root: Path) -> list[WindowFile]:
    """Every entry of `windows/` (sorted by name), decoded and path-checked."""
    files: list[WindowFile] = []
    if not windows_dir.exists():
        return files
    if windows_dir.is_symlink() and not windows_dir.resolve().is_relative_to(
        windows_dir.parent.resolve()
    ):
        return [WindowFile(name="windows", reason="measurement_window_artifact_path_invalid")]
    root = result_root.resolve()
    for entry in sorted(windows_dir.iterdir(), key=lambda p: p.name):
        wf = WindowFile(name=entry.name)
        files.append(wf)
        if entry.suffix != ".json" or entry.is_symlink() or not entry.is_file():
            wf.reason = "measurement_window_artifact_path_invalid"
            continue
        try:
            raw = json.loads(entry.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            wf.reason = "measurement_window_malformed"
            continue
        window = decode_window(raw)
        if window is None:
            wf.reason = "measurement_window_malformed"
            continue
        wf.raw = raw
        wf.window = window
        rp = window.result_path
        if (
            not safe_relative(rp)
            or not (root / rp).resolve().is_relative_to(root)
            or PurePosixPath(rp).stem != entry.stem
        ):
            wf.reason = "measurement_window_result_path_invalid"
    return files


@dataclass(slots=True)
class WindowAudit:
    """Per expected window: the usable file (if any) and the reasons found so far."""

    by_key: dict[tuple[str, int], list[WindowFile]] = field(default_factory=dict)
    artifact_errors: list[tuple[str, list[str]]] = field(default_factory=list)


def audit_windows(files: Sequence[WindowFile], expected: Sequence[ExpectedWindow]) -> WindowAudit:
    audit = WindowAudit()
    wanted = {(w.benchmark_type, w.concurrency) for w in expected}
    for wf in files:
        if wf.window is None:
            audit.artifact_errors.append((f"windows/{wf.name}", [wf.reason or ""]))
            continue
        key = (wf.window.benchmark_type, wf.window.concurrency)
        audit.by_key.setdefault(key, []).append(wf)
        if wf.reason is not None:
            audit.artifact_errors.append((f"windows/{wf.name}", [wf.reason]))
        if key not in wanted:
            audit.artifact_errors.append((f"windows/{wf.name}", ["measurement_window_unexpected"]))
    for copies in audit.by_key.values():
        if len(copies) > 1:
            for wf in copies:
                audit.artifact_errors.append(
                    (f"windows/{wf.name}", ["measurement_window_duplicate"])
                )
    return audit


@dataclass(slots=True)
class Coverage:
    reasons: list[str] = field(default_factory=list)
    gaps: dict[str, float] = field(default_factory=dict)


def check_coverage(
    start: float,
    end: float,
    devices: Sequence[ExpectedDevice],
    samples_by_device: dict[tuple[str, int], list[Sample]],
) -> Coverage:
    """Bracketing (a sample at/before start and at/after end) and the 3 s max gap per device."""
    cov = Coverage()
    for dev in devices:
        seq = samples_by_device.get((dev.hostname, dev.gpu_index), [])
        before = [s for s in seq if s.timestamp_unix <= start]
        after = [s for s in seq if s.timestamp_unix >= end]
        if not before or not after:
            cov.reasons.append("measurement_window_not_bracketed")
            continue
        first, last = before[-1], after[0]
        span = [first, *(s for s in seq if start < s.timestamp_unix < end), last]
        uuids = {s.gpu_uuid for s in span}
        if len(uuids) > 1:
            cov.reasons.append("gpu_uuid_changed")
        gap = (
            max(b.timestamp_unix - a.timestamp_unix for a, b in itertools.pairwise(span))
            if len(span) > 1
            else 0.0
        )
        cov.gaps[f"{dev.hostname}/{first.gpu_uuid}"] = round(gap, 6)
        if gap > MAX_SAMPLE_GAP_SECONDS:
            cov.reasons.append("sample_gap_exceeded")
    cov.reasons = list(dict.fromkeys(cov.reasons))
    return cov


def _interp(a: Sample, b: Sample, t: float) -> float:
    if b.timestamp_unix == a.timestamp_unix:
        return a.power_w
    f = (t - a.timestamp_unix) / (b.timestamp_unix - a.timestamp_unix)
    return a.power_w + f * (b.power_w - a.power_w)


def energy_joules(seq: Sequence[Sample], start: float, end: float) -> float | None:
    """Trapezoidal integral of power over [start, end] with linear interpolation at the edges;
    None unless samples bracket the window."""
    if end <= start:
        return None
    pts: list[tuple[float, float]] = []
    for a, b in itertools.pairwise(seq):
        t0, t1 = a.timestamp_unix, b.timestamp_unix
        if t1 < start or t0 > end or t1 <= t0:
            continue
        lo, hi = max(t0, start), min(t1, end)
        pts.append((lo, _interp(a, b, lo)))
        pts.append((hi, _interp(a, b, hi)))
    if not pts or pts[0][0] > start or pts[-1][0] < end:
        return None
    total = 0.0
    for (t0, p0), (t1, p1) in itertools.pairwise(pts):
        total += (t1 - t0) * (p0 + p1) / 2
    return total
