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
    "MIN_WINDOW_SCRAPES",
    "EngineKind",
    "EngineSeries",
    "engine_charts",
    "find_metrics_file",
    "read_engine_series",
    "window_scrapes",
    "window_scrapes_html",
]

#: Scrapes of each endpoint a measurement window needs for its engine curves to mean something.
MIN_WINDOW_SCRAPES = 10

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
    #: endpoint -> its scrape times (unix seconds), one per scrape that yielded rows
    scrapes: dict[str, list[float]] = field(default_factory=dict)
    #: the scrape config's interval (ms, the endpoints' largest) and window sampling
    interval_ms: int | None = None
    window_samples: int = 0
    window_min_interval_ms: int = 10


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
        out.interval_ms = max((e.collect_interval_ms for e in cfg.endpoints), default=None)
        out.window_samples = cfg.window_samples
        out.window_min_interval_ms = cfg.window_min_interval_ms
    names = sorted({n for k in KINDS for n in k.names})
    try:
        lazy = pl.scan_parquet(path)
        cols = lazy.collect_schema().names()
        clean = (
            pl.col("metric_name_clean")
            if "metric_name_clean" in cols
            else pl.col("metric_name").str.split_exact("{", 1).struct.field("field_0")
        )
        stamps = (
            lazy.select(pl.col("scraper_endpoint"), pl.col("timestamp_ns"))
            .unique()
            .sort("scraper_endpoint", "timestamp_ns")
            .collect()
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
    for (endpoint,), part in stamps.group_by("scraper_endpoint", maintain_order=True):
        out.scrapes[str(endpoint)] = [t / 1e9 for t in part["timestamp_ns"].to_list()]
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


def window_scrapes(engine: EngineSeries, windows: Sequence[Window]) -> list[tuple[str, float, int]]:
    """Per window: its label, its length (s) and the fewest scrapes any endpoint has inside it
    (start and end included)."""
    out = []
    for start, end, label in windows:
        counts = [sum(1 for t in ts if start <= t <= end) for ts in engine.scrapes.values()]
        out.append((label, end - start, min(counts, default=0)))
    return out


def window_scrapes_html(engine: EngineSeries, windows: Sequence[Window]) -> str:
    """How many scrapes each window got, how the scraper chose them, and, for a window with
    fewer than `MIN_WINDOW_SCRAPES`, that its curves cannot be trusted and what to change."""
    if not engine.scrapes or not windows:
        return ""
    rows = window_scrapes(engine, windows)
    counts = ", ".join(f"{label}: {n}" for label, _, n in rows)
    floor = engine.window_min_interval_ms
    if engine.window_samples > 0:
        how = (
            f"window sampling: a scrape when a window opens and closes and at least "
            f"{engine.window_samples} inside every window of {engine.window_samples * floor} ms "
            f"or more (steps from {floor} ms up to collect_interval_ms {engine.interval_ms})"
        )
    else:
        how = f"a fixed interval of {engine.interval_ms} ms (collect_interval_ms set in the recipe)"
    line = (
        f'<p id="engine-scrapes">Scrapes inside each measurement window (the fewest of any '
        f"endpoint): {escape(counts)}; {escape(how)}.</p>"
    )
    short = [(label, seconds, n) for label, seconds, n in rows if n < MIN_WINDOW_SCRAPES]
    if not short:
        return line
    which = "; ".join(f"{label} ({seconds:.2f} s): {n}" for label, seconds, n in short)
    those = "that window" if len(short) == 1 else "those windows"
    if engine.window_samples > 0:
        why = (
            f"the scraper samples each window densely, so {those} lasted less than "
            f"{engine.window_samples * floor} ms or the scrapes were slow"
        )
    else:
        shortest = min(seconds for _, seconds, _ in short)
        fits = max(1, round(shortest * 1000) // MIN_WINDOW_SCRAPES)
        why = (
            "the recipe sets observability.tachometer.collect_interval_ms to "
            f"{engine.interval_ms}; set it to at most {fits} ms, or leave it unset so that every "
            "window is sampled densely"
        )
    return line + (
        f'<p class="warn" id="engine-scrapes-short">Fewer than {MIN_WINDOW_SCRAPES} scrapes in '
        f"{escape(which)}: the engine curves cannot show how the engine moved in "
        f"{those}; {escape(why)}.</p>"
    )
