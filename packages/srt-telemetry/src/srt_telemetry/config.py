"""The JSON contract between the planner and `srt-telemetry`: one frozen struct per subcommand.

The planner (srt-planner) emits these files; `srt-telemetry <command> --config FILE` decodes them
with `read_config`. Unknown fields are rejected so that a planner/telemetry version skew fails
loudly instead of being ignored. Every field is documented in the package README.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, TypeVar

import msgspec

from srt_telemetry.errors import ConfigError

__all__ = [
    "Base",
    "CpuPowerConfig",
    "CpuSource",
    "DashboardConfig",
    "ExpectedDevice",
    "ExpectedWindow",
    "ExporterConfig",
    "ExporterSource",
    "FilterName",
    "PowerConfig",
    "PowerEndpoint",
    "ScrapeConfig",
    "ScrapeEndpoint",
    "WorkerAssignment",
    "decode_config",
    "read_config",
]

FilterName = Literal["dcgm", "node_exporter", "backend", "frontend", "passthrough"]
CpuSource = Literal["auto", "acpi", "dcgm"]
ExporterSource = Literal["auto", "acpi", "dcgm"]


class Base(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Shared base: immutable, keyword-only, unknown fields rejected."""


# --- scrape (Tachometer-compatible) -----------------------------------------------------------


class ScrapeEndpoint(Base, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One Prometheus endpoint the scraper polls."""

    name: str
    url: str
    collect_interval_ms: int = 1000
    filter: FilterName = "passthrough"
    node_metadata: dict[str, str] = {}
    gpu_metadata: dict[str, dict[str, str]] = {}


class ScrapeConfig(Base, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """`srt-telemetry scrape --config scrape.json`."""

    storage: str
    local_dir: str
    endpoints: tuple[ScrapeEndpoint, ...]
    rows_per_parquet: int = 1_000_000
    save_interval_secs: float = 5.0
    sync_interval_secs: float = 60.0
    shutdown_grace_secs: float = 120.0
    request_timeout_seconds: float = 2.0
    #: The folder where the benchmark stamps its measurement windows (host path); None: no
    #: window sampling.
    window_dir: str | None = None
    #: Scrapes of each endpoint wanted inside every measurement window: a scrape when a window
    #: opens and when it closes, and in between a step that starts at `window_min_interval_ms`
    #: and grows with the window's age (`scrape_windows.next_scrape_at`), never longer than the
    #: endpoint's `collect_interval_ms`. 0: the fixed interval throughout (a recipe that sets
    #: `collect_interval_ms` gets exactly that).
    window_samples: Annotated[int, msgspec.Meta(ge=0)] = 0
    #: The shortest step between two scrapes of one endpoint inside a window.
    window_min_interval_ms: Annotated[int, msgspec.Meta(ge=1)] = 10


# --- GPU power (dcgm-power) -------------------------------------------------------------------


class PowerEndpoint(Base, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A DCGM exporter on one worker node, already resolved to a URL by the planner/runtime."""

    hostname: str
    url: str


class WorkerAssignment(Base, frozen=True, kw_only=True, forbid_unknown_fields=True):
    worker_role: str
    worker_index: int
    worker_process: int
    het_group: int | None = None


class ExpectedDevice(Base, frozen=True, kw_only=True, forbid_unknown_fields=True):
    hostname: str
    gpu_index: int
    assignments: tuple[WorkerAssignment, ...] = ()


class ExpectedWindow(Base, frozen=True, kw_only=True, forbid_unknown_fields=True):
    benchmark_type: str
    concurrency: int


class PowerConfig(Base, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """`srt-telemetry power collect|finalize --config power.json`."""

    power_dir: str
    result_root: str
    endpoints: tuple[PowerEndpoint, ...]
    expected_devices: tuple[ExpectedDevice, ...]
    expected_windows: tuple[ExpectedWindow, ...]
    job_id: str = ""
    run_name: str = ""
    collect_interval_ms: int = 1000
    request_timeout_seconds: float = 2.0
    startup_timeout_seconds: float = 30.0
    collector_join_timeout_seconds: float | None = None
    required: bool = False
    producer_version: str = ""
    producer_git_commit: str | None = None
    container_image: str = ""
    exporter_port: int = 9401
    exporter_command: str = ""
    cpu_exporter_endpoints: tuple[PowerEndpoint, ...] = ()
    #: The benchmark type whose concurrencies are chosen while it runs (a capacity search), with
    #: `expected_windows` empty: finalization expects every window the benchmark stamped for that
    #: type, one per concurrency. None: `expected_windows` is the whole list.
    run_time_windows: str | None = None

    @property
    def join_timeout(self) -> float:
        if self.collector_join_timeout_seconds is not None:
            return self.collector_join_timeout_seconds
        return 2 * (2 * self.request_timeout_seconds + 1) + 2


# --- CPU power, leg A (in-job host collector) -------------------------------------------------


class CpuPowerConfig(Base, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """`srt-telemetry cpu-power collect|wait-ready|finalize --config cpu_power.json`."""

    output_dir: str
    expected_nodes: tuple[str, ...] = ()
    source: CpuSource = "auto"
    sample_interval_seconds: float = 0.1
    startup_timeout_seconds: float = 30.0
    required: bool = False
    hwmon_root: str = "/sys/class/hwmon"
    job_id: str = ""
    run_name: str = ""
    producer_git_commit: str | None = None


# --- CPU power, leg B (per-node exporter) -----------------------------------------------------


class ExporterConfig(Base, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """`srt-telemetry cpu-power exporter --config exporter.json` (port 9405 by default)."""

    port: int = 9405
    bind: str = "0.0.0.0"
    source: ExporterSource = "auto"
    hwmon_root: str = "/sys/class/hwmon"
    refresh_interval_seconds: float = 1.0
    max_connections: int = 64


# --- dashboard --------------------------------------------------------------------------------


class DashboardConfig(Base, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """`srt-telemetry dashboard RUN_DIR [--config FILE]`; paths are relative to RUN_DIR."""

    title: str = ""
    output: str = "perf_dashboard.html"
    rollup: str = "benchmark-rollup.json"
    power_dir: str = "power"
    cpu_power_dir: str = "cpu_power"


T = TypeVar("T", bound=Base)


def decode_config(data: bytes, kind: type[T], *, source: str = "<config>") -> T:
    """Decode JSON bytes into `kind`; errors name the source, the JSON path and the problem."""
    try:
        return msgspec.json.decode(data, type=kind)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"{source}: not a valid {kind.__name__}: {exc}") from exc
    except msgspec.DecodeError as exc:
        raise ConfigError(f"{source}: not valid JSON: {exc}") from exc


def read_config(path: Path, kind: type[T]) -> T:
    """Read and decode a config file written by the planner."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(
            f"{path}: cannot read the {kind.__name__} file: {exc.strerror}; "
            "pass the path the planner wrote"
        ) from exc
    return decode_config(data, kind, source=str(path))
