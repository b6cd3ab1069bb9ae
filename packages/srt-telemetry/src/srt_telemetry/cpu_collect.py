"""CPU power leg A: the per-node in-job collector and the head-node readiness gate and merge.

Per node (`srt-telemetry cpu-power collect`): pick a reader (explicit source mandatory, `auto`
= ACPI then DCGM), write `nodes/<host>.metadata.json`, open `nodes/<host>.csv` (CSV v4), write the
ready marker `ready/<host>.ready.json`, then sample every `sample_interval_seconds` on a
monotonic schedule until stopped, flushing each row. No usable source: `ready/<host>.error.json`
and exit 2. At the end the metadata gets `ended_at_unix`, `sample_row_count`,
`read_failure_count`, `status`; exit 0 with rows, 3 without.

Head (`wait-ready`, `finalize`): wait for every expected node's marker (an error marker aborts
early), then merge `nodes/*.csv` into `samples.csv` and write `manifest.json`.
"""

from __future__ import annotations

import csv
import datetime as dt
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import msgspec

from srt_telemetry.atomic import write_json_atomic
from srt_telemetry.config import CpuPowerConfig
from srt_telemetry.cpu_sources import AcpiReader, ChannelReading, open_source
from srt_telemetry.errors import SourceUnavailableError

__all__ = [
    "CPU_HEADER",
    "CpuManifest",
    "build_rows",
    "finalize_cpu_power",
    "node_hostname",
    "run_cpu_collector",
    "wait_cpu_ready",
]

CPU_HEADER = [
    "schema_version",
    "timestamp_unix",
    "timestamp_local",
    "hostname",
    "source",
    "sensor",
    "socket_id",
    "power_w",
    "cpu_rail_w",
    "soc_w",
    "dram_w",
    "total_power_w",
    "cpu_util_total",
    "cpu_util_user",
    "cpu_util_nice",
    "cpu_util_sys",
    "cpu_util_irq",
]
CPU_SCHEMA_VERSION = 4


def node_hostname(environ: dict[str, str]) -> str:
    return environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]


def _fmt(v: float | None) -> str:
    return "" if v is None else repr(round(v, 6))


def build_rows(
    readings: list[ChannelReading], *, hostname: str, source: str, ts: float
) -> list[list[str]]:
    """One CSV v4 row per socket; `total_power_w` only when every socket total was read."""
    sockets: dict[str, dict[str, list[ChannelReading]]] = {}
    for r in readings:
        sockets.setdefault(r.socket, {}).setdefault(r.kind, []).append(r)
    local = dt.datetime.fromtimestamp(ts).astimezone().isoformat()
    totals = [kinds.get("total") for kinds in sockets.values()]
    node_total = (
        sum(sum(c.watts for c in t) for t in totals if t) if all(totals) and totals else None
    )
    rows: list[list[str]] = []
    for sock in sorted(sockets, key=lambda s: (len(s), s)):
        kinds = sockets[sock]

        def watts(kind: str, kinds: dict[str, list[ChannelReading]] = kinds) -> float | None:
            chans = kinds.get(kind)
            return sum(c.watts for c in chans) if chans else None

        total = kinds.get("total")
        sensor = total[0].sensor if total else next(iter(kinds.values()))[0].sensor
        rows.append(
            [
                str(CPU_SCHEMA_VERSION),
                repr(ts),
                local,
                hostname,
                source,
                sensor,
                sock,
                _fmt(watts("total")),
                _fmt(watts("cpu_rail")),
                _fmt(watts("soc")),
                _fmt(watts("dram")),
                _fmt(node_total),
                "",
                "",
                "",
                "",
                "",
            ]
        )
    return rows


@dataclass(frozen=True, slots=True)
class CollectResult:
    rows: int
    read_failures: int
    exit_code: int


def run_cpu_collector(
    config: CpuPowerConfig, hostname: str, stop: threading.Event
) -> CollectResult:
    out = Path(config.output_dir)
    nodes, ready = out / "nodes", out / "ready"
    nodes.mkdir(parents=True, exist_ok=True)
    ready.mkdir(parents=True, exist_ok=True)
    try:
        reader: AcpiReader = open_source(
            config.source, Path(config.hwmon_root), order=("acpi", "dcgm")
        )
    except SourceUnavailableError as exc:
        write_json_atomic(
            ready / f"{hostname}.error.json", {"hostname": hostname, "error": str(exc)}
        )
        raise
    meta: dict[str, object] = {
        "hostname": hostname,
        "source": reader.source,
        "requested_source": config.source,
        "hwmon_root": str(reader.hwmon_root),  # after $SRT_HWMON_ROOT: the tree actually read
        "sample_interval_seconds": config.sample_interval_seconds,
        "channels": [
            {"sensor": c.sensor, "kind": c.kind, "socket": c.socket, "label": c.label}
            for c in reader.channels
        ],
        "aggregate_scope": "socket_total",
        "started_at_unix": time.time(),
        "status": "running",
    }
    write_json_atomic(nodes / f"{hostname}.metadata.json", meta)
    rows = failures = 0
    with (nodes / f"{hostname}.csv").open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(CPU_HEADER)
        fh.flush()
        write_json_atomic(
            ready / f"{hostname}.ready.json",
            {"hostname": hostname, "source": reader.source, "ready_at_unix": time.time()},
        )
        start = time.monotonic()
        k = 0
        while not stop.is_set():
            readings = reader.read()
            if any(r.kind == "total" for r in readings):
                for row in build_rows(
                    readings, hostname=hostname, source=reader.source, ts=time.time()
                ):
                    w.writerow(row)
                    rows += 1
                fh.flush()
            else:
                failures += 1
            k += 1
            nxt = start + k * config.sample_interval_seconds
            stop.wait(max(0.0, nxt - time.monotonic()))
    meta.update(
        ended_at_unix=time.time(),
        sample_row_count=rows,
        read_failure_count=failures,
        status="complete" if rows else "failed",
    )
    write_json_atomic(nodes / f"{hostname}.metadata.json", meta)
    return CollectResult(rows, failures, 0 if rows else 3)


class CpuManifest(msgspec.Struct, kw_only=True):
    schema_version: int = 1
    job_id: str = ""
    run_name: str = ""
    status: Literal["starting", "running", "failed", "complete", "incomplete"] = "starting"
    required: bool = False
    requested_source: str = "auto"
    sample_interval_seconds: float = 0.1
    expected_nodes: list[str] = []
    observed_nodes: list[str] = []
    missing_nodes: list[str] = []
    sample_row_count: int = 0
    reason_codes: list[str] = []
    failed_processes: list[str] = []
    publication_valid: bool = False
    producer_git_commit: str | None = None
    node_metadata: dict[str, dict[str, object]] = {}
    updated_at_unix: float = 0.0


def _manifest(config: CpuPowerConfig) -> CpuManifest:
    return CpuManifest(
        job_id=config.job_id,
        run_name=config.run_name,
        required=config.required,
        requested_source=config.source,
        sample_interval_seconds=config.sample_interval_seconds,
        expected_nodes=sorted(config.expected_nodes),
        producer_git_commit=config.producer_git_commit,
        updated_at_unix=time.time(),
    )


def write_initial_manifest(config: CpuPowerConfig) -> None:
    out = Path(config.output_dir)
    for sub in ("nodes", "ready"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / "manifest.json", _manifest(config))


def wait_cpu_ready(config: CpuPowerConfig, timeout: float | None = None) -> tuple[bool, str]:
    """Poll `ready/` every 0.1 s; an error marker aborts early. Writes the manifest status."""
    out = Path(config.output_dir)
    ready = out / "ready"
    deadline = time.monotonic() + (config.startup_timeout_seconds if timeout is None else timeout)
    manifest = _manifest(config)
    while True:
        errors = sorted(p.name.removesuffix(".error.json") for p in ready.glob("*.error.json"))
        missing = [n for n in manifest.expected_nodes if not (ready / f"{n}.ready.json").exists()]
        if errors or (missing and time.monotonic() >= deadline):
            manifest.status = "failed"
            manifest.missing_nodes = missing
            manifest.reason_codes = [
                "cpu_power_source_unavailable" if errors else "cpu_power_startup_timeout"
            ]
            write_json_atomic(out / "manifest.json", manifest)
            detail = (
                "; ".join(_error_text(ready / f"{n}.error.json") for n in errors)
                or f"no ready marker from {missing}"
            )
            return False, f"{out}: CPU power not ready: {manifest.reason_codes[0]}: {detail}"
        if not missing:
            manifest.status = "running"
            write_json_atomic(out / "manifest.json", manifest)
            return True, f"CPU power ready on {len(manifest.expected_nodes)} node(s)"
        time.sleep(0.1)


def _error_text(path: Path) -> str:
    try:
        data = msgspec.json.decode(path.read_bytes())
    except (OSError, msgspec.DecodeError):
        return f"{path.name}: unreadable"
    return f"{data.get('hostname')}: {data.get('error')}" if isinstance(data, dict) else path.name


def finalize_cpu_power(
    config: CpuPowerConfig, *, interrupted: bool, failed_processes: tuple[str, ...] = ()
) -> tuple[CpuManifest, bool]:
    """Merge node CSVs into `samples.csv` sorted by (timestamp, hostname, sensor)."""
    out = Path(config.output_dir)
    manifest = _manifest(config)
    reasons: list[str] = []
    if interrupted:
        reasons.append("interrupted")
    if failed_processes:
        reasons.append("cpu_collector_failed")
        manifest.failed_processes = sorted(failed_processes)
    rows: list[list[str]] = []
    observed: list[str] = []
    for path in sorted((out / "nodes").glob("*.csv")):
        host = path.stem
        with path.open(newline="") as fh:
            reader = csv.reader(fh)
            if next(reader, None) != CPU_HEADER:
                reasons.append("cpu_samples_malformed")
                continue
            node_rows = list(reader)
        good = [r for r in node_rows if len(r) == len(CPU_HEADER)]
        if len(good) != len(node_rows):
            reasons.append("cpu_samples_malformed")
        if good:
            observed.append(host)
        rows.extend(good)
        meta_path = out / "nodes" / f"{host}.metadata.json"
        if meta_path.exists():
            manifest.node_metadata[host] = msgspec.json.decode(meta_path.read_bytes())
    rows.sort(key=lambda r: (float(r[1]), r[3], r[5]))
    with (out / "samples.csv").open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(CPU_HEADER)
        w.writerows(rows)
    manifest.observed_nodes = observed
    manifest.missing_nodes = [n for n in manifest.expected_nodes if n not in observed]
    if manifest.missing_nodes:
        reasons.append("cpu_node_samples_missing")
    if not rows:
        reasons.append("cpu_samples_empty")
    manifest.reason_codes = list(dict.fromkeys(reasons))
    manifest.sample_row_count = len(rows)
    manifest.publication_valid = not manifest.reason_codes
    manifest.status = "complete" if manifest.publication_valid else "incomplete"
    manifest.updated_at_unix = time.time()
    write_json_atomic(out / "manifest.json", manifest)
    return manifest, config.required and not manifest.publication_valid
