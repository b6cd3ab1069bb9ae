"""Stable reason-code strings of the GPU power contract (one spelling per concept), the CPU power
leg's codes, and one plain-words explanation per code (`REASON_TEXT`, shown by the dashboard)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

__all__ = [
    "CPU_REASON_CODES",
    "OPERATIONAL",
    "REASON_CODES",
    "REASON_TEXT",
    "ROLLUP_REASON_CODES",
    "STARTUP",
    "TERMINAL_INCOMPLETE",
    "dedupe",
    "explain",
]

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


# CPU power leg A (`cpu-power wait-ready | finalize`, cpu_collect.py)
CPU_REASON_CODES: Final = (
    "interrupted",
    "cpu_power_source_unavailable",
    "cpu_power_startup_timeout",
    "cpu_samples_malformed",
    "cpu_node_samples_missing",
    "cpu_samples_empty",
    "cpu_collector_failed",
)
# added to the rollup's per-run `energy.reason_codes` by `srt-bench energy` (its spellings)
ROLLUP_REASON_CODES: Final = ("power_window_validation_missing", "cpu_power_not_bracketed")

#: Every code above -> what it means for the reader of the numbers (a test checks the keys).
REASON_TEXT: Final[Mapping[str, str]] = {
    "exporter_startup_timeout": "The DCGM exporters did not report every GPU of the job in one "
    "collection cycle before the start-up timeout.",
    "exporter_launch_failed": "The DCGM exporter could not be started on the worker nodes.",
    "exporter_exited": "A DCGM exporter stopped while the benchmark ran, so power samples are "
    "missing.",
    "endpoint_timeout": "An exporter did not answer in time; some power samples are missing.",
    "endpoint_http_error": "An exporter could not be reached or answered with an error; some "
    "power samples are missing.",
    "endpoint_parse_error": "An exporter answered with text that is not Prometheus metrics.",
    "endpoint_resolution_failed": "A worker node's address could not be resolved, so its GPUs "
    "were never measured.",
    "power_metric_missing": "An exporter's answer had no GPU power readings "
    "(DCGM_FI_DEV_POWER_USAGE).",
    "duplicate_power_metric": "An exporter reported the same GPU twice in one answer; that "
    "GPU's readings were dropped.",
    "samples_csv_missing": "The raw power samples (samples.csv) are missing.",
    "samples_csv_header_mismatch": "samples.csv does not start with the expected header.",
    "samples_csv_malformed": "samples.csv has rows that cannot be read.",
    "duplicate_sample_row": "samples.csv has the same GPU reading twice in one cycle.",
    "gpu_index_missing": "A power reading had no valid GPU number.",
    "gpu_uuid_missing": "A power reading had no GPU UUID.",
    "invalid_power_value": "A power reading was negative or not a number.",
    "unexpected_device": "Power was reported for a GPU that no benchmark worker uses.",
    "expected_device_missing": "A GPU used by a benchmark worker never reported power.",
    "gpu_uuid_changed": "A GPU's UUID changed during the run, or two GPUs reported the same UUID.",
    "mig_instance_unsupported": "The GPUs are split into MIG instances, which the power capture "
    "does not support.",
    "timestamp_non_monotonic": "A GPU's sample times go backwards in samples.csv.",
    "conflicting_worker_roles": "One GPU is assigned to more than one worker.",
    "conflicting_het_groups": "One GPU or node belongs to more than one Slurm het group.",
    "collector_exception": "The power collector crashed.",
    "collector_interrupted": "The run was cancelled or failed, so power collection stopped early.",
    "collector_join_timeout": "The power collector did not stop in time; its samples were not "
    "checked.",
    "benchmark_child_reap_timeout": "The benchmark process could not be confirmed to have ended.",
    "measurement_window_missing": "The benchmark recorded no measurement window for this "
    "concurrency.",
    "measurement_window_unexpected": "A measurement window was recorded for a concurrency that "
    "was not planned.",
    "measurement_window_duplicate": "Two measurement windows were recorded for one concurrency.",
    "measurement_window_malformed": "A measurement window file is unreadable or inconsistent.",
    "measurement_window_artifact_path_invalid": "A file in the windows folder is not a plain "
    "JSON file (a link, a folder, another extension).",
    "measurement_window_incomplete": "The benchmark did not finish this concurrency.",
    "measurement_window_result_missing": "The benchmark result this window belongs to is missing "
    "or unreadable.",
    "measurement_window_result_mismatch": "The window's start, end or duration differs from its "
    "benchmark result's.",
    "measurement_window_result_path_invalid": "The window names a result file outside the log "
    "folder or with another name.",
    "measurement_window_clock_mismatch": "The wall clock and the benchmark's own timer disagree "
    "on the window's length (the clock stepped).",
    "clock_sync_unverified": "A node's clock differs from the head node's by more than the "
    "tolerance, so its power cannot be lined up with the benchmark windows.",
    "measurement_window_not_bracketed": "Some GPU has no power sample before the window's start "
    "or after its end.",
    "sample_gap_exceeded": "Some GPU went more than 3 s without a power sample inside the window.",
    "interrupted": "The run was cancelled or failed, so CPU power collection stopped early.",
    "cpu_power_source_unavailable": "A node has no readable CPU power sensor (ACPI power_meter).",
    "cpu_power_startup_timeout": "A node's CPU power collector was not ready before the start-up "
    "timeout.",
    "cpu_samples_malformed": "A node's CPU power samples have a wrong header or unreadable rows.",
    "cpu_node_samples_missing": "A node's CPU power samples are missing.",
    "cpu_samples_empty": "No CPU power samples were recorded.",
    "cpu_collector_failed": "A node's CPU power collector exited with an error.",
    "power_window_validation_missing": "The power manifest has no verdict for this window, so its "
    "energy cannot be trusted.",
    "cpu_power_not_bracketed": "Some node has no CPU power sample before the window's start or "
    "after its end.",
}


def explain(code: str) -> str:
    """The plain-words meaning of a reason code (an unknown code says so)."""
    return REASON_TEXT.get(code, "No description for this code (written by a newer tool?).")
