"""Measurement-window files for power telemetry (docs/telemetry-and-bench.md#power-windows): one
JSON per formal phase.

Written atomically (temp file + rename). `running` before the first measured request, then
`completed` or `failed` with the same boundary the result JSON carries. The folder
(`--window-dir` / `$SRT_MEASUREMENT_WINDOW_DIR`) is created before the run (`ensure_window_dir`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import msgspec

from srt_bench.errors import BenchWindowDirError

__all__ = ["WindowStatus", "build_window", "ensure_window_dir", "write_window"]

WindowStatus = Literal["running", "completed", "failed", "interrupted"]


class _Window(msgspec.Struct, frozen=True, kw_only=True):
    schema_version: int = 1
    benchmark_type: str
    result_path: str
    concurrency: int
    benchmark_start_time_unix: float
    benchmark_end_time_unix: float | None
    duration: float | None
    clock_source: str = "head_node_unix_clock"
    status: WindowStatus
    reason: str | None


def build_window(
    *,
    benchmark_type: str,
    result_path: str,
    concurrency: int,
    start_unix: float,
    end_unix: float | None,
    duration: float | None,
    status: WindowStatus,
    reason: str | None,
) -> bytes:
    """The window document (pure); the invariants per status are the caller's to keep."""
    window = _Window(
        benchmark_type=benchmark_type,
        result_path=result_path,
        concurrency=concurrency,
        benchmark_start_time_unix=start_unix,
        benchmark_end_time_unix=end_unix,
        duration=duration,
        status=status,
        reason=reason,
    )
    return msgspec.json.format(msgspec.json.encode(window), indent=2) + b"\n"


def write_window(window_dir: Path, stem: str, document: bytes) -> Path:
    """Atomically write `<window_dir>/<stem>.json`."""
    target = window_dir / f"{stem}.json"
    tmp = window_dir / f".{stem}.json.tmp"
    tmp.write_bytes(document)
    tmp.replace(target)
    return target


def ensure_window_dir(path: Path) -> Path:
    """Create the window folder (parents included) if missing; `BenchWindowDirError` (exit 2)
    names the path and the cause when it cannot be (permission, a file in the way)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        cause = "a file is in the way"
    except NotADirectoryError:
        cause = "a file is in the way of a parent folder"
    except OSError as exc:
        cause = exc.strerror or str(exc)
    else:
        return path
    raise BenchWindowDirError(
        f"measurement-window folder {path}: cannot be created: {cause}; "
        "fix it or point --window-dir / $SRT_MEASUREMENT_WINDOW_DIR elsewhere"
    )
