"""Stable reason-code strings of the GPU power contract (one spelling per concept)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

__all__ = ["OPERATIONAL", "REASON_CODES", "STARTUP", "TERMINAL_INCOMPLETE", "dedupe"]

REASON_CODES: Final = (
    "exporter_startup_timeout",
    "exporter_launch_failed",
    "exporter_exited",
    "endpoint_timeout",
    "endpoint_http_error",
    "endpoint_parse_error",
    "endpoint_resolution_failed",
    "power_metric_missing",
    "duplicate_power_metric",
    "samples_csv_missing",
    "samples_csv_header_mismatch",
    "samples_csv_malformed",
    "duplicate_sample_row",
    "gpu_index_missing",
    "gpu_uuid_missing",
    "invalid_power_value",
    "unexpected_device",
    "expected_device_missing",
    "gpu_uuid_changed",
    "mig_instance_unsupported",
    "timestamp_non_monotonic",
    "conflicting_worker_roles",
    "conflicting_het_groups",
    "collector_exception",
    "collector_interrupted",
    "collector_join_timeout",
    "benchmark_child_reap_timeout",
    "measurement_window_missing",
    "measurement_window_unexpected",
    "measurement_window_duplicate",
    "measurement_window_malformed",
    "measurement_window_artifact_path_invalid",
    "measurement_window_incomplete",
    "measurement_window_result_missing",
    "measurement_window_result_mismatch",
    "measurement_window_result_path_invalid",
    "measurement_window_clock_mismatch",
    "clock_sync_unverified",
    "measurement_window_not_bracketed",
    "sample_gap_exceeded",
)

# any of these makes the terminal status `incomplete`
TERMINAL_INCOMPLETE: Final = frozenset(
    {
        "exporter_exited",
        "collector_exception",
        "collector_interrupted",
        "collector_join_timeout",
        "benchmark_child_reap_timeout",
    }
)
# with `required: true`, any of these makes the terminal status `failed`
STARTUP: Final = frozenset(
    {"exporter_startup_timeout", "exporter_launch_failed", "endpoint_resolution_failed"}
)
# always a nonzero exit (operational failure), required or not
OPERATIONAL: Final = frozenset({"benchmark_child_reap_timeout", "collector_join_timeout"})
# read back from samples.csv (disk-derived)
CSV_READ: Final = frozenset(
    {
        "samples_csv_missing",
        "samples_csv_header_mismatch",
        "samples_csv_malformed",
        "duplicate_sample_row",
        "timestamp_non_monotonic",
    }
)


def dedupe(codes: Iterable[str]) -> list[str]:
    """De-duplicate preserving first-seen order."""
    return list(dict.fromkeys(codes))
