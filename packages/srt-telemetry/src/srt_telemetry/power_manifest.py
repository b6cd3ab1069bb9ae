"""The GPU power `manifest.json` (schema v1) and the collector's state file `collector.json`."""

from __future__ import annotations

from typing import Literal

import msgspec

from srt_telemetry.config import ExpectedDevice, ExpectedWindow, PowerConfig

__all__ = [
    "ArtifactError",
    "CollectorState",
    "DcgmExporterInfo",
    "Manifest",
    "ObservedDevice",
    "WindowValidation",
    "initial_manifest",
]

ManifestStatus = Literal["starting", "running", "complete", "incomplete", "failed"]


class DcgmExporterInfo(msgspec.Struct, kw_only=True):
    container_image_resolved: str
    container_image_sha256: str | None
    port: int
    command: str


class ObservedDevice(msgspec.Struct, kw_only=True):
    hostname: str
    gpu_index: int
    gpu_uuids: list[str]
    first_sample_time_unix: float
    last_sample_time_unix: float


class WindowValidation(msgspec.Struct, kw_only=True):
    benchmark_type: str
    concurrency: int
    window_file: str | None
    power_coverage_valid: bool
    reason_codes: list[str]
    per_device_max_sample_gap_seconds: dict[str, float]


class ArtifactError(msgspec.Struct, kw_only=True):
    path: str
    reason_codes: list[str]


class Manifest(msgspec.Struct, kw_only=True):
    schema_version: int = 1
    producer: str = "srt-slurm.dcgm-power"
    producer_version: str = ""
    producer_git_commit: str | None = None
    source_metric: str = "DCGM_FI_DEV_POWER_USAGE"
    unit: str = "W"
    power_scope: str = "gpu_device_board_as_reported_by_dcgm"
    timestamp_source: str = "head_node_unix_clock"
    job_id: str = ""
    run_name: str = ""
    sample_interval_seconds: float = 1.0
    request_timeout_seconds: float = 2.0
    max_scrape_duration_seconds: float | None = None
    required: bool = False
    started_at_unix: float | None = None
    stopped_at_unix: float | None = None
    status: ManifestStatus = "starting"
    publication_valid: bool = False
    dcgm_exporter: DcgmExporterInfo | None = None
    expected_devices: list[ExpectedDevice] = []
    observed_devices: list[ObservedDevice] = []
    expected_windows: list[ExpectedWindow] = []
    scrape_count: int = 0
    sample_row_count: int = 0
    window_validations: list[WindowValidation] = []
    artifact_errors: list[ArtifactError] = []
    #: The clock check (power_clock.py): per endpoint hostname `ok`, `failed` or `not_checkable`
    #: (its exporter stamps no samples, like dcgm-exporter); the nodes off the head clock by
    #: more than `clock_tolerance_seconds` (`clock_sync_unverified`), with their offsets.
    clock_checks: dict[str, Literal["ok", "failed", "not_checkable"]] = {}
    clock_tolerance_seconds: float | None = None
    clock_sync_failures: list[ClockSyncFailure] = []
    reason_codes: list[str] = []


class ClockSyncFailure(msgspec.Struct, kw_only=True):
    """A node whose exporter stamps its samples with a clock this far from the head's."""

    hostname: str
    offset_seconds: float


class CollectorState(msgspec.Struct, kw_only=True):
    """What only the running collector knows; read back by `power finalize` and `wait-ready`."""

    status: Literal["running", "stopped"]
    ready: bool = False
    ready_at_unix: float | None = None
    startup_failed: bool = False
    started_at_unix: float
    stopped_at_unix: float | None = None
    scrape_count: int = 0
    sample_row_count: int = 0
    max_scrape_duration_seconds: float | None = None
    reason_codes: list[str] = []
    #: hostname -> the largest (by magnitude) exporter-clock minus head-clock offset seen, for
    #: exporters that stamp their samples; absent hosts could not be checked.
    clock_offsets: dict[str, float] = {}


def initial_manifest(config: PowerConfig, *, started_at: float | None) -> Manifest:
    return Manifest(
        producer_version=config.producer_version,
        producer_git_commit=config.producer_git_commit,
        job_id=config.job_id,
        run_name=config.run_name,
        sample_interval_seconds=config.collect_interval_ms / 1000.0,
        request_timeout_seconds=config.request_timeout_seconds,
        required=config.required,
        started_at_unix=started_at,
        dcgm_exporter=DcgmExporterInfo(
            container_image_resolved=config.container_image,
            container_image_sha256=None,
            port=config.exporter_port,
            command=config.exporter_command,
        ),
        expected_devices=list(config.expected_devices),
        expected_windows=list(config.expected_windows),
    )
