"""`samples.csv` of the GPU power contract (schema v1): writer and strict reader."""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

__all__ = ["HEADER", "Sample", "SamplesRead", "SamplesWriter", "read_samples"]

HEADER = (
    "schema_version",
    "timestamp_unix",
    "scrape_seq",
    "hostname",
    "gpu_index",
    "gpu_uuid",
    "power_w",
)


@dataclass(frozen=True, slots=True)
class Sample:
    timestamp_unix: float
    scrape_seq: int
    hostname: str
    gpu_index: int
    gpu_uuid: str
    power_w: float


class SamplesWriter:
    """Appends rows; `flush` after every cycle (floats keep full `repr` precision)."""

    def __init__(self, path: Path) -> None:
        self._fh: TextIO = path.open("w", newline="")
        self._csv = csv.writer(self._fh, lineterminator="\n")
        self._csv.writerow(HEADER)
        self._fh.flush()
        self.rows = 0

    def write(self, samples: Iterable[Sample]) -> None:
        for s in samples:
            self._csv.writerow(
                (
                    1,
                    repr(s.timestamp_unix),
                    s.scrape_seq,
                    s.hostname,
                    s.gpu_index,
                    s.gpu_uuid,
                    repr(s.power_w),
                )
            )
            self.rows += 1
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


@dataclass(slots=True)
class SamplesRead:
    samples: list[Sample] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)


def _row(fields: list[str]) -> Sample | None:
    if len(fields) != len(HEADER) or fields[0] != "1":
        return None
    try:
        ts = float(fields[1])
        seq = int(fields[2])
        gpu = int(fields[4])
        watts = float(fields[6])
    except ValueError:
        return None
    host, uuid = fields[3], fields[5]
    if not host or not uuid or seq < 0 or gpu < 0:
        return None
    if not (math.isfinite(ts) and ts >= 0 and math.isfinite(watts) and watts >= 0):
        return None
    return Sample(ts, seq, host, gpu, uuid, watts)


def read_samples(path: Path) -> SamplesRead:
    """Strict read: exact header, every row valid, unique (seq, host, gpu), per-device
    timestamps non-decreasing in seq order. Bad rows are dropped and named by a reason code."""
    out = SamplesRead()
    try:
        fh = path.open(newline="")
    except FileNotFoundError:
        out.reasons.append("samples_csv_missing")
        return out
    with fh:
        rows = csv.reader(fh)
        header = next(rows, None)
        if header is None or tuple(header) != HEADER:
            out.reasons.append("samples_csv_header_mismatch")
            return out
        seen: set[tuple[int, str, int]] = set()
        for fields in rows:
            sample = _row(fields)
            if sample is None:
                out.reasons.append("samples_csv_malformed")
                continue
            key = (sample.scrape_seq, sample.hostname, sample.gpu_index)
            if key in seen:
                out.reasons.append("duplicate_sample_row")
                continue
            seen.add(key)
            out.samples.append(sample)
    last: dict[tuple[str, int], float] = {}
    for s in sorted(out.samples, key=lambda s: s.scrape_seq):
        dev = (s.hostname, s.gpu_index)
        if dev in last and s.timestamp_unix < last[dev]:
            out.reasons.append("timestamp_non_monotonic")
        last[dev] = s.timestamp_unix
    out.reasons = list(dict.fromkeys(out.reasons))
    return out
