"""CPU energy of a measurement window from the CPU power CSVs srt-telemetry writes
(docs/telemetry-and-bench.md#rollup).

Two sources, both with `timestamp_unix`, `hostname` and `total_power_w` (the node total, repeated
on every row of one sample, blank when it could not be computed): leg A's merged
`<cpu_power_dir>/samples.csv` (CSV v4, one row per socket) and leg B's
`<power_dir>/cpu/samples.csv` (v1, one row per sensor). Per node the first source whose samples
bracket the window is integrated (trapezoid, linear interpolation at the window edges).

`read_cpu_totals` does the file I/O; the rest is pure.
"""

from __future__ import annotations

import csv
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from srt_bench.errors import BenchPowerFileError

__all__ = [
    "CPU_NOT_BRACKETED",
    "CpuSeries",
    "CpuWindowEnergy",
    "cpu_window_energy",
    "integrate_power",
    "read_cpu_totals",
]

#: Reason code: a node seen in the CPU samples has none at/before the start or at/after the end.
CPU_NOT_BRACKETED = "cpu_power_not_bracketed"
_REQUIRED = ("schema_version", "timestamp_unix", "hostname", "total_power_w")

#: hostname -> (timestamp_unix, node total W), sorted by time.
CpuSeries = dict[str, list[tuple[float, float]]]


def _number(text: str, *, path: Path, line: int, column: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise BenchPowerFileError(
            f"{path}: line {line}: column {column}: {text!r} is not a finite number >= 0; "
            "fix or remove the file"
        )
    return value


def read_cpu_totals(path: Path) -> CpuSeries | None:
    """The node totals of one CPU power CSV; None when the file does not exist. A header
    without the needed columns, or a row of the wrong length or with a bad number, raises
    `BenchPowerFileError` naming the file and the line."""
    try:
        fh = path.open(newline="")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise BenchPowerFileError(f"{path}: cannot be read: {exc.strerror or exc}") from exc
    series: CpuSeries = {}
    seen: set[tuple[str, str]] = set()
    with fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None:
            return series
        lacking = [c for c in _REQUIRED if c not in header]
        if lacking:
            raise BenchPowerFileError(
                f"{path}: line 1: not a CPU power CSV header, no column {', '.join(lacking)}"
            )
        col = {name: header.index(name) for name in _REQUIRED}
        for line, row in enumerate(reader, start=2):
            if len(row) != len(header):
                raise BenchPowerFileError(
                    f"{path}: line {line}: {len(row)} fields, the header has {len(header)}"
                )
            host, stamp, total = (
                row[col[c]] for c in ("hostname", "timestamp_unix", "total_power_w")
            )
            if not host:
                raise BenchPowerFileError(f"{path}: line {line}: column hostname is empty")
            t = _number(stamp, path=path, line=line, column="timestamp_unix")
            if not total or (host, stamp) in seen:
                continue
            seen.add((host, stamp))
            watts = _number(total, path=path, line=line, column="total_power_w")
            series.setdefault(host, []).append((t, watts))
    return {host: sorted(pts) for host, pts in sorted(series.items())}


def _at(a: tuple[float, float], b: tuple[float, float], t: float) -> float:
    (t0, p0), (t1, p1) = a, b
    if t1 == t0:
        return p0
    return p0 + (p1 - p0) * (t - t0) / (t1 - t0)


def integrate_power(
    points: Sequence[tuple[float, float]], start: float, end: float
) -> float | None:
    """Joules over [start, end] from sorted (time, W) points: the trapezoid rule between samples,
    linear interpolation at both edges. None unless a sample is at/before `start` and another
    at/after `end` (or the window is empty)."""
    if end <= start or not points or points[0][0] > start or points[-1][0] < end:
        return None
    total = 0.0
    for a, b in itertools.pairwise(points):
        lo, hi = max(a[0], start), min(b[0], end)
        if hi > lo:
            total += (hi - lo) * (_at(a, b, lo) + _at(a, b, hi)) / 2
    return total


@dataclass(frozen=True, slots=True)
class CpuWindowEnergy:
    """`total` (J, null unless every node seen brackets the window), `per_node` (J of the nodes
    that do; null when none does) and the reason codes."""

    total: float | None
    per_node: dict[str, float] | None
    reasons: tuple[str, ...]


def cpu_window_energy(sources: Sequence[CpuSeries], start: float, end: float) -> CpuWindowEnergy:
    """Per node, the first source (leg A before leg B) whose samples bracket the window."""
    hosts = sorted({host for source in sources for host in source})
    per_node: dict[str, float] = {}
    for host in hosts:
        for source in sources:
            joules = integrate_power(source.get(host, ()), start, end)
            if joules is not None:
                per_node[host] = joules
                break
    if not per_node:
        return CpuWindowEnergy(None, None, (CPU_NOT_BRACKETED,) if hosts else ())
    if len(per_node) < len(hosts):
        return CpuWindowEnergy(None, per_node, (CPU_NOT_BRACKETED,))
    return CpuWindowEnergy(math.fsum(per_node[h] for h in hosts), per_node, ())
