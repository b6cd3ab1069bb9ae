"""The engine metrics Tachometer saved (`srt-telemetry scrape`'s `final.parquet`), per worker,
over time, with the benchmark's measurement windows shaded.

Where: the `storage` folder named by `RUN_DIR/tachometer_config.json` (the scrape config the
runtime wrote), else the first `final.parquet` under RUN_DIR. One line per scrape endpoint (a
worker process, or a frontend), named as in the scrape config (`agg_0_node-01`,
`frontend_0`). A metric family that an endpoint serves with several label sets (one per engine
or DP rank) is summed per scrape, or averaged for the KV cache fraction.

`KINDS` says which metric stands for what, per engine; for each endpoint the first name of a
kind's list that the endpoint served is used (vLLM serves both KV cache names, for example):

- KV cache usage (%, mean x 100 of fractions 0-1): `vllm:kv_cache_usage_perc`,
  `vllm:gpu_cache_usage_perc`, `sglang:token_usage`,
  `dynamo_component_kvstats_gpu_cache_usage_percent`;
- running requests (sum): `vllm:num_requests_running`, `sglang:num_running_reqs`,
  `dynamo_component_inflight_requests`, `dynamo_frontend_inflight_requests`;
- waiting requests (sum): `vllm:num_requests_waiting`, `sglang:num_queue_reqs`;
- queue depth (sum): `dynamo_work_handler_queue_depth`, `dynamo_frontend_queued_requests`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Literal

import msgspec
import polars as pl

from srt_telemetry.config import ScrapeConfig
from srt_telemetry.dashboard_power import MAX_LINES, Points, Window, downsample
from srt_telemetry.svg import Band, Series, line_chart

__all__ = [
    "KINDS",
    "EngineKind",
    "EngineSeries",
    "engine_charts",
    "find_metrics_file",
    "read_engine_series",
]

SCRAPE_CONFIG = "tachometer_config.json"


@dataclass(frozen=True)
class EngineKind:
    key: str
    title: str
    unit: str
    names: tuple[str, ...]
    how: Literal["sum", "mean"]
    scale: float = 1.0


KINDS: tuple[EngineKind, ...] = (
    EngineKind(
        "kv_cache",
        "KV cache usage",
        "%",
        (
            "vllm:kv_cache_usage_perc",
            "vllm:gpu_cache_usage_perc",
            "sglang:token_usage",
            "dynamo_component_kvstats_gpu_cache_usage_percent",
        ),
        "mean",
        100.0,
    ),
    EngineKind(
        "running",
        "Running requests",
        "requests",
        (
            "vllm:num_requests_running",
            "sglang:num_running_reqs",
            "dynamo_component_inflight_requests",
            "dynamo_frontend_inflight_requests",
        ),
        "sum",
    ),
    EngineKind(
        "waiting",
        "Waiting requests",
        "requests",
        ("vllm:num_requests_waiting", "sglang:num_queue_reqs"),
        "sum",
    ),
    EngineKind(
        "queue",
        "Queue depth",
        "requests",
        ("dynamo_work_handler_queue_depth", "dynamo_frontend_queued_requests"),
        "sum",
    ),
)


@dataclass
class EngineSeries:
    source: str = ""
    #: kind key -> endpoint -> [(unix seconds, value)]
    series: dict[str, dict[str, Points]] = field(default_factory=dict)
    #: kind key -> endpoint -> the metric name used
    used: dict[str, dict[str, str]] = field(default_factory=dict)
    #: endpoints that are frontends (charted apart from the workers: other scale)
    frontends: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


def _scrape_config(run_dir: Path) -> ScrapeConfig | None:
    try:
        return msgspec.json.decode((run_dir / SCRAPE_CONFIG).read_bytes(), type=ScrapeConfig)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None


def find_metrics_file(run_dir: Path) -> Path | None:
    """`final.parquet` in the scrape config's storage folder, else the first one under RUN_DIR."""
    cfg = _scrape_config(run_dir)
    if cfg is not None and cfg.storage:
        path = Path(cfg.storage.removeprefix("file://")) / "final.parquet"
        if path.is_file():
            return path
    found = sorted(run_dir.glob("**/final.parquet"))
    return found[0] if found else None


def _natural(name: str) -> tuple[tuple[int, int | str], ...]:
    """`decode_2` before `decode_10`."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"(\d+)", name) if p)


def read_engine_series(run_dir: Path) -> EngineSeries:
    out = EngineSeries()
    run_dir = run_dir.resolve()
    path = find_metrics_file(run_dir)
    if path is None:
        out.notes.append("no Tachometer final.parquet: engine metrics not shown")
        return out
    out.source = str(path.relative_to(run_dir)) if path.is_relative_to(run_dir) else str(path)
    cfg = _scrape_config(run_dir)
    if cfg is not None:
        out.frontends = {e.name for e in cfg.endpoints if e.filter == "frontend"}
    names = sorted({n for k in KINDS for n in k.names})
    try:
        lazy = pl.scan_parquet(path)
        cols = lazy.collect_schema().names()
        clean = (
            pl.col("metric_name_clean")
            if "metric_name_clean" in cols
            else pl.col("metric_name").str.split_exact("{", 1).struct.field("field_0")
        )
        frame = (
            lazy.select(
                pl.col("scraper_endpoint"),
                clean.alias("name"),
                pl.col("metric_value"),
                pl.col("timestamp_ns"),
            )
            .filter(pl.col("name").is_in(names) & pl.col("metric_value").is_finite())
            .collect()
        )
    except (OSError, pl.exceptions.PolarsError) as exc:
        out.notes.append(f"{path}: engine metrics not shown ({exc})")
        return out
    for kind in KINDS:
        rows = frame.filter(pl.col("name").is_in(kind.names))
        agg = pl.col("metric_value").mean() if kind.how == "mean" else pl.col("metric_value").sum()
        grouped = (
            rows.group_by("scraper_endpoint", "name", "timestamp_ns")
            .agg(agg.alias("v"))
            .sort("scraper_endpoint", "name", "timestamp_ns")
        )
        per_endpoint: dict[str, Points] = {}
        used: dict[str, str] = {}
        for (endpoint, name), part in grouped.group_by(
            "scraper_endpoint", "name", maintain_order=True
        ):
            ep, nm = str(endpoint), str(name)
            if ep in used and kind.names.index(used[ep]) <= kind.names.index(nm):
                continue
            used[ep] = nm
            per_endpoint[ep] = [
                (t / 1e9, v * kind.scale)
                for t, v in zip(part["timestamp_ns"].to_list(), part["v"].to_list(), strict=True)
            ]
        if per_endpoint:
            out.series[kind.key] = dict(sorted(per_endpoint.items(), key=lambda i: _natural(i[0])))
            out.used[kind.key] = used
    if not out.series:
        out.notes.append(f"{out.source}: no engine metric this dashboard knows (see KINDS)")
    return out


def engine_charts(engine: EngineSeries, windows: Sequence[Window]) -> list[str]:
    """One chart per kind (and per group of `MAX_LINES` endpoints), seconds since the first
    sample or window, windows shaded and labelled; under each, the metric names it plots."""
    stamps = [t for s in engine.series.values() for pts in s.values() for t, _ in pts]
    t0 = min([*stamps, *(w[0] for w in windows)], default=0.0)
    charts: list[str] = []
    for kind in KINDS:
        per_endpoint: Mapping[str, Points] = engine.series.get(kind.key, {})
        if not per_endpoint:
            continue
        for who in ("worker", "frontend"):
            names = [n for n in per_endpoint if (n in engine.frontends) == (who == "frontend")]
            charts += _charts(engine, kind, who, names, windows=windows, t0=t0)
    return charts


def _charts(
    engine: EngineSeries,
    kind: EngineKind,
    who: str,
    names: Sequence[str],
    *,
    windows: Sequence[Window],
    t0: float,
) -> list[str]:
    per_endpoint = engine.series[kind.key]
    groups = [names[i : i + MAX_LINES] for i in range(0, len(names), MAX_LINES)]
    charts = []
    for gi, group in enumerate(groups):
        metrics = sorted({engine.used[kind.key][n] for n in group})
        title = f"{kind.title} per {who}"
        if len(groups) > 1:
            title += f", part {gi + 1} of {len(groups)}"
        lines = []
        for name in group:
            pts = downsample(per_endpoint[name])
            lines.append(Series(name, [t - t0 for t, _ in pts], [v for _, v in pts]))
        chart = line_chart(
            title,
            lines,
            x_label="seconds since the first sample",
            y_label=kind.unit,
            bands=[Band(a - t0, b - t0, label) for a, b, label in windows],
        )
        charts.append(f'{chart}<p class="cap">{escape(", ".join(metrics))}</p>')
    return charts
