"""The Tachometer-compatible scraper loop (`srt-telemetry scrape`).

One thread per endpoint polls on a fixed schedule (`collect_interval_ms`), more often inside the
benchmark's measurement windows when `window_samples` is set (scrape_windows.py), parses the
body, turns it into rows and appends them to a shared `SegmentWriter`. The calling thread seals
the buffer into `out-N.parquet` every `save_interval_secs` and compacts every
`sync_interval_secs` (and once at shutdown) into `<local>/incomplete-N.parquet`, copied to
`<storage>/final.parquet`.
Errors of one endpoint are logged and counted; the loop goes on.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from srt_telemetry.columns import frame_schema
from srt_telemetry.config import ScrapeConfig, ScrapeEndpoint
from srt_telemetry.errors import ParseError, StorageError
from srt_telemetry.httpget import FetchError, Getter
from srt_telemetry.promtext import parse_text
from srt_telemetry.rows import build_batch, extra_columns
from srt_telemetry.scrape_windows import WindowWatch, next_scrape_at
from srt_telemetry.segments import (
    SegmentWriter,
    compact_segments,
    copy_atomic,
    list_segments,
    segment_number,
    superseded_segments,
    write_parquet_atomic,
)

__all__ = ["ScrapeStats", "prepare_storage", "run_scraper", "storage_path"]

log = logging.getLogger("srt_telemetry.scrape")


@dataclass
class ScrapeStats:
    scrapes: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    rows_written: int = 0
    segments_sealed: int = 0
    final_rows: int = 0
    final_path: str = ""
    shutdown_seconds: float = 0.0


def storage_path(storage: str) -> Path:
    """`file:///x` or a plain path. Object storage (s3://) is not supported by this scraper."""
    if storage.startswith("file://"):
        return Path(storage.removeprefix("file://"))
    if "://" in storage:
        raise StorageError(
            f"storage {storage!r}: only local paths and file:// URLs are supported; "
            "write to the run's log dir and let the runtime upload it"
        )
    return Path(storage)


def prepare_storage(config: ScrapeConfig) -> tuple[Path, Path]:
    """Create the local dir and the storage leaf (which must not exist yet)."""
    storage = storage_path(config.storage)
    if storage.is_dir():
        raise StorageError(
            f"storage {storage}: already exists; the scraper creates the storage leaf itself "
            "so one run never mixes with another; pass a fresh path"
        )
    local = Path(config.local_dir)
    try:
        storage.mkdir(parents=True)
        local.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(f"cannot create {exc.filename}: {exc.strerror}") from exc
    return storage, local


class _Clock:
    """Wall clock anchored once, advanced by the monotonic clock (timestamps never go back)."""

    def __init__(self) -> None:
        self.wall0_ns = time.time_ns()
        self.mono0 = time.monotonic()

    def now(self) -> tuple[int, float]:
        elapsed = time.monotonic() - self.mono0
        return self.wall0_ns + int(elapsed * 1e9), elapsed


def _fetch(getter: Getter | None, url: str) -> str:
    if getter is None:  # file:// endpoint
        return Path(url.removeprefix("file://")).read_text()
    return getter.get()


class _EndpointLoop(threading.Thread):
    def __init__(
        self,
        *,
        ep: ScrapeEndpoint,
        extras: tuple[str, ...],
        writer: SegmentWriter,
        lock: threading.Lock,
        stop: threading.Event,
        clock: _Clock,
        stats: ScrapeStats,
        timeout: float,
        windows: WindowWatch | None,
        window_samples: int,
        window_floor: float,
    ) -> None:
        super().__init__(name=f"scrape-{ep.name}", daemon=True)
        self.ep, self.extras, self.writer, self.lock = ep, extras, writer, lock
        self.stop, self.clock, self.stats, self.timeout = stop, clock, stats, timeout
        self.getter = None if ep.url.startswith("file://") else Getter(ep.url, timeout)
        self.windows, self.window_samples, self.window_floor = windows, window_samples, window_floor
        #: set by the window watcher when a window opens or closes (and at the stop)
        self.kick = threading.Event()

    def run(self) -> None:
        interval = self.ep.collect_interval_ms / 1000.0
        getter = self.getter
        windows = self.windows
        seen = windows.snapshot()[0] if windows is not None else 0
        try:
            origin = time.monotonic()
            while not self.stop.is_set():
                started = time.monotonic()
                self.scrape_once(getter)
                self.kick.clear()
                since = None
                if windows is not None:
                    generation, since = windows.snapshot()
                    if generation != seen:  # a window opened or closed while we scraped
                        seen = generation
                        continue
                due = next_scrape_at(
                    started,
                    origin=origin,
                    interval=interval,
                    window_since=since,
                    samples=self.window_samples,
                    floor=self.window_floor,
                )
                now = time.monotonic()
                if due <= now and since is None:  # overran the grid: the next slot from now
                    due = next_scrape_at(
                        now, origin=origin, interval=interval, window_since=None, samples=0, floor=0
                    )
                if self.kick.wait(max(0.0, due - now)) and windows is not None:
                    seen = windows.snapshot()[0]
        finally:
            if getter is not None:
                getter.close()

    def scrape_once(self, getter: Getter | None) -> None:
        ep = self.ep
        ts0, t0 = self.clock.now()
        try:
            body = _fetch(getter, ep.url)
            ts1, t1 = self.clock.now()
            batch = build_batch(
                parse_text(body),
                ep,
                self.extras,
                timestamp_ns=(ts0 + ts1) // 2,
                time_since_start=(t0 + t1) / 2,
            )
        except (FetchError, OSError, ParseError, ValueError) as exc:
            self.stats.errors[ep.name] = self.stats.errors.get(ep.name, 0) + 1
            log.warning("endpoint %s (%s): %s: %s", ep.name, ep.url, type(exc).__name__, exc)
            return
        with self.lock:
            self.writer.append(batch)
        self.stats.scrapes[ep.name] = self.stats.scrapes.get(ep.name, 0) + 1


def _sync(local: Path, storage: Path) -> int:
    """Merge the live segments into a new `incomplete-N`, publish it as `final.parquet`."""
    live = list_segments(local)
    if not live:
        return 0
    number = max(segment_number(p) for p in live)
    merged = local / f"incomplete-{number}.parquet"
    if live != [merged]:
        compact_segments(live, merged)
    rows = compact_rows(merged)
    copy_atomic(merged, storage / "final.parquet")
    for old in superseded_segments(local):
        old.unlink(missing_ok=True)
    return rows


def compact_rows(path: Path) -> int:
    return int(pl.scan_parquet(path).select(pl.len()).collect().item())


def _kick(loops: list[_EndpointLoop]) -> None:
    for loop in loops:
        loop.kick.set()


def run_scraper(config: ScrapeConfig, stop: threading.Event) -> ScrapeStats:
    """Scrape until `stop` is set, then flush, compact and publish `final.parquet`."""
    for ep in config.endpoints:  # reject bad URLs before anything is created on disk
        if not ep.url.startswith("file://"):
            Getter(ep.url, config.request_timeout_seconds).close()
    storage, local = prepare_storage(config)
    extras = extra_columns(config.endpoints)
    writer = SegmentWriter(local, extras, rows_per_parquet=config.rows_per_parquet)
    lock = threading.Lock()
    stats = ScrapeStats()
    clock = _Clock()
    floor = config.window_min_interval_ms / 1000.0
    watch = None
    if config.window_dir is not None and config.window_samples > 0:
        watch = WindowWatch(
            Path(config.window_dir), stop=stop, on_change=lambda: _kick(loops), poll=floor
        )
    loops: list[_EndpointLoop] = [
        _EndpointLoop(
            ep=ep,
            extras=extras,
            writer=writer,
            lock=lock,
            stop=stop,
            clock=clock,
            stats=stats,
            timeout=config.request_timeout_seconds,
            windows=watch,
            window_samples=config.window_samples,
            window_floor=floor,
        )
        for ep in config.endpoints
    ]
    for loop in loops:
        loop.start()
    if watch is not None:
        watch.start()
    log.info("scraping %d endpoints into %s (local %s)", len(loops), storage, local)
    next_save = time.monotonic() + config.save_interval_secs
    sync_every = config.sync_interval_secs
    next_sync = time.monotonic() + sync_every if sync_every > 0 else float("inf")
    while not stop.is_set():
        stop.wait(max(0.0, min(next_save, next_sync) - time.monotonic()))
        now = time.monotonic()
        if now >= next_save:
            with lock:
                writer.seal()
            next_save = now + config.save_interval_secs
        if now >= next_sync and not stop.is_set():
            _sync(local, storage)
            next_sync = time.monotonic() + sync_every
    t_stop = time.monotonic()
    _kick(loops)
    if watch is not None:
        watch.join(timeout=config.request_timeout_seconds + 1.0)
    for loop in loops:
        loop.join(timeout=config.request_timeout_seconds + 1.0)
    with lock:
        writer.seal()
    stats.final_rows = _sync(local, storage)
    if not (storage / "final.parquet").exists():
        empty = pl.DataFrame(schema=frame_schema(extras)).with_columns(
            pl.col("metric_name").alias("metric_name_clean")
        )
        write_parquet_atomic(empty, storage / "final.parquet")
    stats.final_path = str(storage / "final.parquet")
    for p in list_segments(local):
        p.unlink(missing_ok=True)
    stats.rows_written = writer.rows_written
    stats.segments_sealed = writer.segments_sealed
    stats.shutdown_seconds = time.monotonic() - t_stop
    if stats.shutdown_seconds > config.shutdown_grace_secs:
        log.warning(
            "shutdown took %.1f s, over shutdown_grace_secs=%.1f",
            stats.shutdown_seconds,
            config.shutdown_grace_secs,
        )
    return stats
