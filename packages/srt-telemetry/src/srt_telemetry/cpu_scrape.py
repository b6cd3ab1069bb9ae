"""CPU power leg B, head side: scrape each node's `cpu-power exporter` into
`<power_dir>/cpu/samples.csv` (v1) and `cpu/cpu_manifest.json`. Best-effort by design: it never
changes an exit code (errors are counted per node in the manifest)."""

from __future__ import annotations

import csv
import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

from srt_telemetry.atomic import write_json_atomic
from srt_telemetry.config import PowerEndpoint
from srt_telemetry.errors import ParseError
from srt_telemetry.promtext import parse_text

__all__ = ["CPU_EXPORTER_HEADER", "CpuExporterRow", "CpuExporterScraper", "parse_cpu_exporter"]

CPU_EXPORTER_HEADER = (
    "schema_version",
    "timestamp_unix",
    "hostname",
    "source",
    "sensor",
    "socket_id",
    "power_w",
    "total_power_w",
)
log = logging.getLogger("srt_telemetry.cpu_scrape")


@dataclass(slots=True)
class NodeStats:
    resolved_mode: str | None = None
    scrape_count: int = 0
    error_count: int = 0


@dataclass(frozen=True, slots=True)
class CpuExporterRow:
    sensor: str
    socket: str
    power_w: float


def parse_cpu_exporter(body: str) -> tuple[str, list[CpuExporterRow], float | None]:
    """(mode, readings, node total). ACPI is preferred when a body has both families; the ACPI
    total sums `type="total"` channels only (None without one, never derived from rails); the
    DCGM total sums field 1130 over sockets."""
    parsed = parse_text(body)
    acpi: list[tuple[CpuExporterRow, str]] = []
    dcgm: list[tuple[CpuExporterRow, str]] = []
    for name, labels, value in zip(parsed.names, parsed.labels, parsed.values, strict=True):
        lab = dict(labels)
        if name == "cpu_power_acpi_watts":
            row = CpuExporterRow(lab.get("sensor", ""), lab.get("socket", ""), value)
            acpi.append((row, lab.get("type", "")))
        elif name == "cpu_power_dcgm_watts":
            field = lab.get("field_id", "")
            sock = lab.get("socket", "")
            dcgm.append((CpuExporterRow(f"dcgm/socket{sock}/field{field}", sock, value), field))
    if acpi:
        totals = [r.power_w for r, kind in acpi if kind == "total"]
        return "acpi", [r for r, _ in acpi], (sum(totals) if totals else None)
    if dcgm:
        main = [r.power_w for r, field in dcgm if field == "1130"]
        return "dcgm", [r for r, _ in dcgm], (sum(main) if main else None)
    return "none", [], None


class CpuExporterScraper(threading.Thread):
    """Polls every endpoint each `interval` seconds until `stop` is set."""

    def __init__(
        self,
        endpoints: Sequence[PowerEndpoint],
        out_dir: Path,
        *,
        interval: float,
        timeout: float,
        stop: threading.Event,
        producer_git_commit: str | None,
    ) -> None:
        super().__init__(name="cpu-exporter-scrape", daemon=True)
        self.endpoints = tuple(endpoints)
        self.out_dir = out_dir
        self.interval, self.timeout, self.stop = interval, timeout, stop
        self.nodes: dict[str, NodeStats] = {ep.hostname: NodeStats() for ep in self.endpoints}
        self.manifest: dict[str, object] = {
            "schema_version": 1,
            "producer": "srt-slurm.cpu-power",
            "producer_git_commit": producer_git_commit,
            "started_at_unix": time.time(),
            "stopped_at_unix": None,
            "nodes": self.nodes,
        }

    def run(self) -> None:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        with (
            (self.out_dir / "samples.csv").open("w", newline="") as fh,
            httpx.Client(timeout=self.timeout, follow_redirects=False) as client,
        ):
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(CPU_EXPORTER_HEADER)
            fh.flush()
            start, k = time.monotonic(), 0
            while True:
                for ep in self.endpoints:
                    self._scrape(client, ep, w.writerow)
                fh.flush()
                if self.stop.is_set():
                    break
                k += 1
                self.stop.wait(max(0.0, start + k * self.interval - time.monotonic()))
        self.manifest["stopped_at_unix"] = time.time()
        write_json_atomic(self.out_dir / "cpu_manifest.json", self.manifest)

    def _scrape(
        self,
        client: httpx.Client,
        ep: PowerEndpoint,
        writerow: Callable[[Iterable[object]], object],
    ) -> None:
        try:
            resp = client.get(ep.url)
            resp.raise_for_status()
            mode, rows, total = parse_cpu_exporter(resp.text)
        except (httpx.HTTPError, ParseError) as exc:
            self.nodes[ep.hostname].error_count += 1
            log.warning("cpu exporter %s (%s): %s", ep.hostname, ep.url, exc)
            return
        ts = time.time()
        node = self.nodes[ep.hostname]
        node.resolved_mode = mode
        node.scrape_count += 1
        for r in rows:
            writerow(
                (
                    1,
                    repr(ts),
                    ep.hostname,
                    mode,
                    r.sensor,
                    r.socket,
                    repr(r.power_w),
                    "" if total is None else repr(total),
                )
            )
