"""The scrape row schema and the column buffer rows are appended to before a segment is sealed.

Row columns (all non-null unless marked):
`scraper_endpoint` Utf8, `metric_name` Utf8, `metric_value` Float64,
`histogram_bucket_lower`, `histogram_bucket_upper`, `histogram_sum`, `histogram_count` Float64
(nullable), `time_since_start` Float64 (s, monotonic), `timestamp_ns` Int64 (epoch ns), then the
extra Utf8 columns ("" when absent). Compaction adds `metric_name_clean`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

__all__ = ["BASE_SCHEMA", "ColumnBuffer", "RowBatch", "frame_schema"]

BASE_SCHEMA: dict[str, pl.DataType] = {
    "scraper_endpoint": pl.String(),
    "metric_name": pl.String(),
    "metric_value": pl.Float64(),
    "histogram_bucket_lower": pl.Float64(),
    "histogram_bucket_upper": pl.Float64(),
    "histogram_sum": pl.Float64(),
    "histogram_count": pl.Float64(),
    "time_since_start": pl.Float64(),
    "timestamp_ns": pl.Int64(),
}


# legacy metadata keys (reference Tachometer) -> the column they land in
def frame_schema(extras: Sequence[str]) -> dict[str, pl.DataType]:
    schema = dict(BASE_SCHEMA)
    schema.update({k: pl.String() for k in extras})
    return schema


@dataclass(slots=True)
class RowBatch:
    """Rows of one scrape of one endpoint as plain lists (cheap to append to a buffer)."""

    endpoint: str
    timestamp_ns: int
    time_since_start: float
    names: list[str]
    values: list[float]
    hist: (
        tuple[list[float | None], list[float | None], list[float | None], list[float | None]] | None
    )
    extras: dict[str, list[str] | str]  # per-row values, or one value for every row

    def __len__(self) -> int:
        return len(self.names)


class ColumnBuffer:
    """Column lists that batches are appended to; `frame()` turns them into one DataFrame."""

    def __init__(self, extras: Sequence[str]) -> None:
        self.extras = tuple(extras)
        self.schema = frame_schema(extras)
        self.clear()

    def clear(self) -> None:
        self.cols: dict[str, list[Any]] = {k: [] for k in self.schema}
        self.rows = 0

    def append(self, b: RowBatch) -> None:
        n = len(b)
        if n == 0:
            return
        c = self.cols
        c["scraper_endpoint"].extend([b.endpoint] * n)
        c["metric_name"].extend(b.names)
        c["metric_value"].extend(b.values)
        hist_cols = (
            "histogram_bucket_lower",
            "histogram_bucket_upper",
            "histogram_sum",
            "histogram_count",
        )
        if b.hist is None:
            nones = [None] * n
            for col in hist_cols:
                c[col].extend(nones)
        else:
            for col, vals in zip(hist_cols, b.hist, strict=True):
                c[col].extend(vals)
        c["time_since_start"].extend([b.time_since_start] * n)
        c["timestamp_ns"].extend([b.timestamp_ns] * n)
        for key in self.extras:
            v = b.extras[key]
            c[key].extend([v] * n if isinstance(v, str) else v)
        self.rows += n

    def frame(self) -> pl.DataFrame:
        return pl.DataFrame(self.cols, schema=self.schema)
