"""The head-node GPU power collector (`srt-telemetry power collect`).

One thread, one fixed cadence (`collect_interval_ms`) for all DCGM endpoints; each cycle polls
every endpoint concurrently, abandons a request after `2 * request_timeout + 1` s, stamps all rows
of one endpoint with the midpoint of request start and response, and appends them to
`samples.csv` (flushed per cycle). Ready = one cycle with a row for every expected device before
`startup_timeout_seconds`. After the stop request one final bracketing cycle runs. State for
`wait-ready` and `finalize` goes to `collector.json` (atomic writes).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from srt_telemetry.atomic import write_json_atomic
from srt_telemetry.config import PowerConfig, PowerEndpoint
from srt_telemetry.cpu_scrape import CpuExporterScraper
from srt_telemetry.power_manifest import CollectorState, initial_manifest
from srt_telemetry.power_parse import parse_power
from srt_telemetry.power_samples import Sample, SamplesWriter
from srt_telemetry.reasons import dedupe

__all__ = ["EndpointResult", "image_sha256", "poll_endpoint", "run_power_collector"]

log = logging.getLogger("srt_telemetry.power")


@dataclass(slots=True)
class EndpointResult:
    hostname: str
    timestamp_unix: float
    duration: float
    samples: list[Sample] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    #: The exporter's sample timestamp minus the head-clock midpoint (None: no timestamps).
    clock_offset: float | None = None


def image_sha256(image: str) -> str | None:
    """SHA-256 of the container image when it names an existing local file, else None."""
    path = Path(image)
    if not image or "://" in image or not path.is_file():
        return None
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def poll_endpoint(client: httpx.Client, ep: PowerEndpoint, seq: int) -> EndpointResult:
    t0 = time.time()
    m0 = time.monotonic()
    try:
        resp = client.get(ep.url)
        resp.raise_for_status()
        body = resp.text
    except httpx.TimeoutException:
        return EndpointResult(ep.hostname, t0, time.monotonic() - m0, reasons=["endpoint_timeout"])
    except httpx.HTTPError:
        return EndpointResult(
            ep.hostname, t0, time.monotonic() - m0, reasons=["endpoint_http_error"]
        )
    dur = time.monotonic() - m0
    ts = t0 + dur / 2
    parsed = parse_power(body)
    res = EndpointResult(ep.hostname, ts, dur, reasons=parsed.reasons)
    if parsed.timestamp_ms is not None:
        res.clock_offset = parsed.timestamp_ms / 1000.0 - ts
    res.samples = [
        Sample(ts, seq, ep.hostname, r.gpu_index, r.gpu_uuid, r.power_w) for r in parsed.readings
    ]
    return res


class _Collector:
    def __init__(self, config: PowerConfig) -> None:
        self.config = config
        self.dir = Path(config.power_dir)
        self.state = CollectorState(status="running", started_at_unix=time.time())
        self.expected = {(d.hostname, d.gpu_index) for d in config.expected_devices}
        self.seq = 0
        self.reasons: list[str] = []

    def save(self) -> None:
        self.state.reason_codes = dedupe(self.reasons)
        write_json_atomic(self.dir / "collector.json", self.state)

    def cycle(self, pool: ThreadPoolExecutor, client: httpx.Client, writer: SamplesWriter) -> None:
        seq = self.seq
        self.seq += 1
        budget = 2 * self.config.request_timeout_seconds + 1
        futures: dict[Future[EndpointResult], PowerEndpoint] = {
            pool.submit(poll_endpoint, client, ep, seq): ep for ep in self.config.endpoints
        }
        done, pending = wait(futures, timeout=budget)
        if pending:
            self.reasons.append("endpoint_timeout")
        covered: set[tuple[str, int]] = set()
        rows: list[Sample] = []
        for fut in sorted(done, key=lambda f: futures[f].hostname):
            res = fut.result()
            self.reasons.extend(res.reasons)
            rows.extend(res.samples)
            if res.clock_offset is not None:
                seen = self.state.clock_offsets.get(res.hostname)
                if seen is None or abs(res.clock_offset) > abs(seen):
                    self.state.clock_offsets[res.hostname] = round(res.clock_offset, 6)
            covered.update((s.hostname, s.gpu_index) for s in res.samples)
            prev = self.state.max_scrape_duration_seconds or 0.0
            self.state.max_scrape_duration_seconds = max(prev, round(res.duration, 6))
        writer.write(rows)
        self.state.scrape_count = self.seq
        self.state.sample_row_count = writer.rows
        if not self.state.ready and self.expected and self.expected <= covered:
            self.state.ready = True
            self.state.ready_at_unix = time.time()
            log.info("power telemetry ready: cycle %d saw all %d devices", seq, len(self.expected))
            self.save()


def run_power_collector(config: PowerConfig, stop: threading.Event) -> CollectorState:
    """Collect until `stop` is set; returns the final collector state (also in collector.json)."""
    power_dir = Path(config.power_dir)
    (power_dir / "windows").mkdir(parents=True, exist_ok=True)
    col = _Collector(config)
    manifest = initial_manifest(config, started_at=col.state.started_at_unix)
    if manifest.dcgm_exporter is not None:
        manifest.dcgm_exporter.container_image_sha256 = image_sha256(config.container_image)
    write_json_atomic(power_dir / "manifest.json", manifest)
    writer = SamplesWriter(power_dir / "samples.csv")
    manifest.status = "running"
    write_json_atomic(power_dir / "manifest.json", manifest)
    col.save()
    interval = config.collect_interval_ms / 1000.0
    cpu_leg = (
        CpuExporterScraper(
            config.cpu_exporter_endpoints,
            power_dir / "cpu",
            interval=interval,
            timeout=config.request_timeout_seconds,
            stop=stop,
            producer_git_commit=config.producer_git_commit,
        )
        if config.cpu_exporter_endpoints
        else None
    )
    if cpu_leg is not None:
        cpu_leg.start()
    deadline = time.monotonic() + config.startup_timeout_seconds
    timeout = httpx.Timeout(config.request_timeout_seconds)
    pool = ThreadPoolExecutor(max_workers=max(1, len(config.endpoints)), thread_name_prefix="dcgm")
    try:
        with httpx.Client(timeout=timeout, follow_redirects=False) as client:
            start = time.monotonic()
            k = 0
            while not stop.is_set():
                col.cycle(pool, client, writer)
                late = time.monotonic() > deadline
                if not col.state.ready and not col.state.startup_failed and late:
                    col.state.startup_failed = True
                    col.reasons.append("exporter_startup_timeout")
                    log.warning(
                        "power telemetry not ready after %.1f s", config.startup_timeout_seconds
                    )
                    col.save()
                k += 1
                nxt = start + k * interval
                now = time.monotonic()
                if nxt < now:
                    k += int((now - nxt) / interval) + 1
                    nxt = start + k * interval
                stop.wait(max(0.0, nxt - now))
            col.cycle(pool, client, writer)  # the final bracketing scrape
    except Exception as exc:  # recorded as a reason code, never swallowed silently
        log.error("power collector failed: %s: %s", type(exc).__name__, exc)
        col.reasons.append("collector_exception")
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        writer.close()
        if cpu_leg is not None:
            cpu_leg.join(timeout=2 * config.request_timeout_seconds + 1)
        col.state.status = "stopped"
        col.state.stopped_at_unix = time.time()
        col.save()
    return col.state
