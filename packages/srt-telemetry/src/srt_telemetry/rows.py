"""Turn parsed Prometheus samples into scrape rows (the schema is in `columns.py`) per filter.
The extra columns are the sorted union of metadata keys and filter extras (`extra_columns`).

Filters (`ScrapeEndpoint.filter`):
- `passthrough`: `name{labels}` as served (labels sorted), `_sum`/`_count` kept as rows.
- `backend` / `frontend`: same naming; histogram `_sum`/`_count` only on the bucket rows.
- `dcgm`: `DCGM_FI_`/`DCGM_` prefix dropped, lower-cased, well-known fields renamed
  (`gpu_power`, `gpu_util`, `gpu_temp`, `gpu_mem_used|free|total`); labels become the `gpu`
  column plus the endpoint's `gpu_metadata` for that GPU.
- `node_exporter`: `node_` prefix dropped, `mode` label becomes a column, the remaining labels stay
  inline; `node_cpu_seconds_total` is replaced by per-mode `cpu_time_{min,max,p10,p90}` over CPUs.
Histogram `_bucket` rows carry `histogram_bucket_upper` = `le` (null for `+Inf`) and
`histogram_bucket_lower` = the previous bucket's upper bound (0 for the first).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import assert_never

import polars as pl

from srt_telemetry.columns import BASE_SCHEMA, ColumnBuffer, RowBatch, frame_schema
from srt_telemetry.config import ScrapeEndpoint
from srt_telemetry.promtext import Labels, ParsedText

__all__ = [
    "BASE_SCHEMA",
    "ColumnBuffer",
    "RowBatch",
    "build_batch",
    "build_frame",
    "extra_columns",
    "frame_schema",
    "inline_labels",
]

_LEGACY_KEYS = {
    "node": "hostname",
    "endpoint": "worker_role",
    "endpoint_index": "worker_index",
    "rank": "worker_process",
    "process_index": "worker_process",
    "index": "frontend_index",
}
_DCGM_RENAMES = {
    "dev_power_usage": "gpu_power",
    "dev_gpu_util": "gpu_util",
    "dev_gpu_temp": "gpu_temp",
    "dev_fb_used": "gpu_mem_used",
    "dev_fb_free": "gpu_mem_free",
    "dev_fb_total": "gpu_mem_total",
}
_GPU_LABELS = ("gpu", "GPU", "device")
_inline_cache: dict[Labels, str] = {}
_full_cache: dict[tuple[str, Labels], str] = {}
_gpu_cache: dict[Labels, str] = {}


def _column_key(key: str, flt: str) -> str:
    return _LEGACY_KEYS.get(key, key) if flt in ("backend", "frontend") else key


def extra_columns(endpoints: Iterable[ScrapeEndpoint]) -> tuple[str, ...]:
    """Sorted union of metadata keys and filter extras (`gpu`, `mode`) over all endpoints."""
    keys: set[str] = {"gpu", "mode"}
    for ep in endpoints:
        keys.update(_column_key(k, ep.filter) for k in ep.node_metadata)
        for meta in ep.gpu_metadata.values():
            keys.update(meta)
    keys -= set(BASE_SCHEMA)
    return tuple(sorted(keys))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def inline_labels(labels: Labels) -> str:
    """`{a="1",b="2"}` with label names sorted, or "" for no labels (memoised)."""
    hit = _inline_cache.get(labels)
    if hit is not None:
        return hit
    text = "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels)) + "}" if labels else ""
    if len(_inline_cache) > 200_000:
        _inline_cache.clear()
    _inline_cache[labels] = text
    return text


def _le(labels: Labels) -> tuple[float | None, Labels]:
    le: float | None = None
    rest: list[tuple[str, str]] = []
    for k, v in labels:
        if k == "le":
            f = float(v)
            le = None if math.isinf(f) else f
        else:
            rest.append((k, v))
    return le, tuple(rest)


class _Rows:
    __slots__ = ("counts", "extra", "hist", "lower", "names", "sums", "upper", "values")

    def __init__(self, extra_keys: Sequence[str]) -> None:
        self.names: list[str] = []
        self.values: list[float] = []
        self.hist = False
        self.lower: list[float | None] = []
        self.upper: list[float | None] = []
        self.sums: list[float | None] = []
        self.counts: list[float | None] = []
        self.extra: dict[str, list[str]] = {k: [] for k in extra_keys}

    def enable_hist(self) -> None:
        if not self.hist:
            n = len(self.names)
            self.hist = True
            self.lower = [None] * n
            self.upper = [None] * n
            self.sums = [None] * n
            self.counts = [None] * n


def _hist_totals(parsed: ParsedText) -> dict[tuple[str, Labels], float]:
    hist_families = {f for f, t in parsed.types.items() if t == "histogram"}
    totals: dict[tuple[str, Labels], float] = {}
    if not hist_families:
        return totals
    for name, labels, value in zip(parsed.names, parsed.labels, parsed.values, strict=True):
        if name.endswith(("_sum", "_count")):
            base = name.rpartition("_")[0]
            if base in hist_families:
                totals[(name, labels)] = value
    return totals


def _generic(parsed: ParsedText, rows: _Rows, *, keep_totals: bool) -> None:
    totals = _hist_totals(parsed)
    names, values = rows.names, rows.values
    prev_upper: dict[tuple[str, Labels], float] = {}
    for name, labels, value in zip(parsed.names, parsed.labels, parsed.values, strict=True):
        if totals:
            if not keep_totals and (name, labels) in totals:
                continue
            if name.endswith("_bucket") and name[:-7] in parsed.types:
                le, rest = _le(labels)
                base = name[:-7]
                rows.enable_hist()
                key = (base, rest)
                names.append(name + inline_labels(rest))
                values.append(value)
                rows.lower.append(prev_upper.get(key, 0.0))
                rows.upper.append(le)
                rows.sums.append(totals.get((base + "_sum", rest)))
                rows.counts.append(totals.get((base + "_count", rest)))
                if le is not None:
                    prev_upper[key] = le
                continue
        if labels:
            key = (name, labels)
            full = _full_cache.get(key)
            if full is None:
                if len(_full_cache) > 200_000:
                    _full_cache.clear()
                full = _full_cache[key] = name + inline_labels(labels)
            names.append(full)
        else:
            names.append(name)
        values.append(value)
        if rows.hist:
            rows.lower.append(None)
            rows.upper.append(None)
            rows.sums.append(None)
            rows.counts.append(None)


def _dcgm(parsed: ParsedText, rows: _Rows, ep: ScrapeEndpoint) -> None:
    gpu_col = rows.extra["gpu"]
    gpu_keys = sorted({k for meta in ep.gpu_metadata.values() for k in meta})
    meta_cols = [(k, rows.extra[k], ep.node_metadata.get(k, "")) for k in gpu_keys]
    renamed: dict[str, str] = {}
    for name, labels, value in zip(parsed.names, parsed.labels, parsed.values, strict=True):
        short = renamed.get(name)
        if short is None:
            s = name.removeprefix("DCGM_FI_").removeprefix("DCGM_").lower()
            short = renamed[name] = _DCGM_RENAMES.get(s, s)
        gpu = _gpu_cache.get(labels)
        if gpu is None:
            gpu = next((v for k, v in labels if k in _GPU_LABELS), "")
            if len(_gpu_cache) > 200_000:
                _gpu_cache.clear()
            _gpu_cache[labels] = gpu
        rows.names.append(short)
        rows.values.append(value)
        gpu_col.append(gpu)
        meta = ep.gpu_metadata.get(gpu, {})
        for key, col, default in meta_cols:
            col.append(meta.get(key, default))


def _quantile(sorted_values: list[float], q: float) -> float:
    # nearest-rank on the sorted values
    idx = max(0, min(len(sorted_values) - 1, math.ceil(q * len(sorted_values)) - 1))
    return sorted_values[idx]


def _node_key(name: str, labels: Labels) -> tuple[str, str]:
    """(row name, mode) of a node-exporter sample (memoised by the caller)."""
    mode = ""
    rest = labels
    for k, v in labels:
        if k == "mode":
            mode = v
            rest = tuple(p for p in labels if p[0] != "mode")
            break
    short = name[5:] if name.startswith("node_") else name
    return (short + inline_labels(rest) if rest else short), mode


_node_cache: dict[tuple[str, Labels], tuple[str, str]] = {}


def _node_exporter(parsed: ParsedText, rows: _Rows) -> None:
    mode_col = rows.extra["mode"]
    names, values = rows.names, rows.values
    cache = _node_cache
    if len(cache) > 200_000:
        cache.clear()
    cpu_modes: dict[str, list[float]] = {}
    for name, labels, value in zip(parsed.names, parsed.labels, parsed.values, strict=True):
        key = (name, labels)
        hit = cache.get(key)
        if hit is None:
            hit = cache[key] = _node_key(name, labels)
        if name == "node_cpu_seconds_total":
            cpu_modes.setdefault(hit[1], []).append(value)
            continue
        names.append(hit[0])
        values.append(value)
        mode_col.append(hit[1])
    for mode in sorted(cpu_modes):
        vals = sorted(cpu_modes[mode])
        for stat, stat_value in (
            ("min", vals[0]),
            ("max", vals[-1]),
            ("p10", _quantile(vals, 0.10)),
            ("p90", _quantile(vals, 0.90)),
        ):
            rows.names.append(f"cpu_time_{stat}")
            rows.values.append(stat_value)
            mode_col.append(mode)


def build_batch(
    parsed: ParsedText,
    ep: ScrapeEndpoint,
    extras: Sequence[str],
    *,
    timestamp_ns: int,
    time_since_start: float,
) -> RowBatch:
    """Rows of one scrape of one endpoint (all rows share the timestamps)."""
    rows = _Rows(extras)
    match ep.filter:
        case "passthrough":
            _generic(parsed, rows, keep_totals=True)
        case "backend" | "frontend":
            _generic(parsed, rows, keep_totals=False)
        case "dcgm":
            _dcgm(parsed, rows, ep)
        case "node_exporter":
            _node_exporter(parsed, rows)
        case _:
            assert_never(ep.filter)
    n = len(rows.names)
    constants = {_column_key(k, ep.filter): v for k, v in ep.node_metadata.items()}
    extra_values: dict[str, list[str] | str] = {}
    for key in extras:
        col = rows.extra[key]
        extra_values[key] = col if len(col) == n and n else constants.get(key, "")
    return RowBatch(
        endpoint=ep.name,
        timestamp_ns=timestamp_ns,
        time_since_start=time_since_start,
        names=rows.names,
        values=rows.values,
        hist=(rows.lower, rows.upper, rows.sums, rows.counts) if rows.hist else None,
        extras=extra_values,
    )


def build_frame(
    parsed: ParsedText,
    ep: ScrapeEndpoint,
    extras: Sequence[str],
    *,
    timestamp_ns: int,
    time_since_start: float,
) -> pl.DataFrame:
    """`build_batch` as a DataFrame (for tests and one-off use; the scraper buffers batches)."""
    buf = ColumnBuffer(extras)
    buf.append(
        build_batch(
            parsed, ep, extras, timestamp_ns=timestamp_ns, time_since_start=time_since_start
        )
    )
    return buf.frame()
