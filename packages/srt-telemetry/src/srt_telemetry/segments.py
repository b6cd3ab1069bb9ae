"""Immutable Parquet segments and their compaction.

`SegmentWriter` buffers row frames in memory and seals them into `<local>/out-N.parquet`: the
frame is written to a hidden temporary name in the same directory, fsynced and renamed, so an
`out-*.parquet` file is either complete or absent (a SIGKILL loses at most the unsealed buffer).
`compact_segments` merges sealed segments into one sorted file with the same discipline; the
scraper uses it for `<storage>/final.parquet`.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from srt_telemetry.columns import ColumnBuffer, RowBatch
from srt_telemetry.errors import StorageError

__all__ = [
    "SegmentWriter",
    "compact_segments",
    "copy_atomic",
    "list_segments",
    "segment_number",
    "superseded_segments",
    "write_parquet_atomic",
]

_SEGMENT = re.compile(r"^(out|incomplete)-(\d+)\.parquet$")
ROW_GROUP_SIZE = 200_000


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_parquet_atomic(frame: pl.DataFrame | pl.LazyFrame, dest: Path) -> None:
    """Write `frame` to `dest` via a hidden temp file in the same dir, fsync, rename."""
    tmp = dest.with_name(f".{dest.name}.tmp-{os.getpid()}")
    try:
        if isinstance(frame, pl.LazyFrame):
            frame.sink_parquet(tmp, compression="zstd", row_group_size=ROW_GROUP_SIZE)
        else:
            frame.write_parquet(
                tmp, compression="zstd", row_group_size=ROW_GROUP_SIZE, statistics=True
            )
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        tmp.replace(dest)
        _fsync_dir(dest.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _scan(local_dir: Path) -> tuple[list[tuple[int, Path]], list[tuple[int, Path]]]:
    outs: list[tuple[int, Path]] = []
    incompletes: list[tuple[int, Path]] = []
    for p in local_dir.iterdir():
        m = _SEGMENT.match(p.name)
        if m:
            (outs if m.group(1) == "out" else incompletes).append((int(m.group(2)), p))
    return sorted(outs), sorted(incompletes)


def list_segments(local_dir: Path) -> list[Path]:
    """The live segments in merge order: the newest `incomplete-N` (it holds every segment up to
    `out-N`), then the `out-M` with M > N. Superseded files (left behind when a process died
    between writing `incomplete-N` and deleting its inputs) are not listed."""
    outs, incompletes = _scan(local_dir)
    if not incompletes:
        return [p for _, p in outs]
    last, inc = incompletes[-1]
    return [inc] + [p for n, p in outs if n > last]


def superseded_segments(local_dir: Path) -> list[Path]:
    """Segments whose rows are already in the newest `incomplete-N` (safe to delete)."""
    outs, incompletes = _scan(local_dir)
    if not incompletes:
        return []
    last, _ = incompletes[-1]
    return [p for _, p in incompletes[:-1]] + [p for n, p in outs if n <= last]


def segment_number(path: Path) -> int:
    m = _SEGMENT.match(path.name)
    if m is None:
        raise ValueError(f"{path}: not a segment name (out-N.parquet / incomplete-N.parquet)")
    return int(m.group(2))


def _next_number(local_dir: Path) -> int:
    outs, incompletes = _scan(local_dir)
    return max((n for n, _ in outs + incompletes), default=-1) + 1


def copy_atomic(src: Path, dest: Path) -> None:
    """Copy `src` to `dest` through a hidden temp file and a rename."""
    tmp = dest.with_name(f".{dest.name}.tmp-{os.getpid()}")
    try:
        shutil.copyfile(src, tmp)
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        tmp.replace(dest)
        _fsync_dir(dest.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class SegmentWriter:
    """Row buffer that seals immutable `out-N.parquet` files. Not thread-safe (caller locks)."""

    def __init__(self, local_dir: Path, extras: Sequence[str], *, rows_per_parquet: int) -> None:
        self.local_dir = local_dir
        self.rows_per_parquet = rows_per_parquet
        self._buffer = ColumnBuffer(extras)
        self._next = _next_number(local_dir)
        for stale in local_dir.glob(".*.parquet.tmp-*"):  # half-written by a killed process
            stale.unlink(missing_ok=True)
        self.rows_written = 0
        self.segments_sealed = 0

    @property
    def buffered_rows(self) -> int:
        return self._buffer.rows

    def append(self, batch: RowBatch) -> None:
        """Buffer one batch; seals a segment once `rows_per_parquet` rows are buffered."""
        self._buffer.append(batch)
        if self._buffer.rows >= self.rows_per_parquet:
            self.seal()

    def seal(self) -> Path | None:
        """Write the buffer as the next `out-N.parquet`; returns its path (None if empty)."""
        if self._buffer.rows == 0:
            return None
        frame = self._buffer.frame()
        self._buffer.clear()
        dest = self.local_dir / f"out-{self._next}.parquet"
        write_parquet_atomic(frame, dest)
        self._next += 1
        self.rows_written += frame.height
        self.segments_sealed += 1
        return dest


def _valid(path: Path) -> bool:
    try:
        pl.read_parquet_schema(path)
    except (OSError, pl.exceptions.PolarsError):
        return False
    return True


def compact_segments(inputs: Sequence[Path], dest: Path) -> int:
    """Merge `inputs` into `dest` sorted by (metric_name, time_since_start); adds
    `metric_name_clean`. Unreadable inputs are skipped. Returns the row count written."""
    valid = [p for p in inputs if _valid(p)]
    if not valid:
        return 0
    frames = [pl.scan_parquet(p) for p in valid]
    lazy = pl.concat(frames, how="diagonal_relaxed")
    if "metric_name_clean" not in lazy.collect_schema().names():
        lazy = lazy.with_columns(
            pl.col("metric_name")
            .str.split_exact("{", 1)
            .struct.field("field_0")
            .alias("metric_name_clean")
        )
    lazy = lazy.sort(["metric_name", "time_since_start"], maintain_order=True)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        write_parquet_atomic(lazy, dest)
    except OSError as exc:
        raise StorageError(f"{dest}: cannot write the compacted file: {exc}") from exc
    return int(pl.scan_parquet(dest).select(pl.len()).collect().item())
