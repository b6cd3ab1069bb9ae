"""Power files in the shapes srt-telemetry writes (`manifest.json`, `energy.json`, the CPU power
CSVs of leg A and leg B), written by hand: srt-bench's tests must not import srt-telemetry."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

__all__ = [
    "LEG_A_HEADER",
    "LEG_B_HEADER",
    "leg_a",
    "leg_b",
    "manifest_doc",
    "validation",
    "window",
    "write_csv",
    "write_power",
]

LEG_A_HEADER = [
    "schema_version", "timestamp_unix", "timestamp_local", "hostname", "source", "sensor",
    "socket_id", "power_w", "cpu_rail_w", "soc_w", "dram_w", "total_power_w", "cpu_util_total",
    "cpu_util_user", "cpu_util_nice", "cpu_util_sys", "cpu_util_irq",
]  # fmt: skip
LEG_B_HEADER = [
    "schema_version", "timestamp_unix", "hostname", "source", "sensor", "socket_id", "power_w",
    "total_power_w",
]  # fmt: skip


def window(c: int, start: float, end: float, per: dict[str, float], total: float | None) -> Any:
    return {
        "benchmark_type": "sa-bench",
        "concurrency": c,
        "start_unix": start,
        "end_unix": end,
        "duration_seconds": end - start,
        "energy_joules": total,
        "avg_power_w": None if total is None else total / (end - start),
        "total_output_tokens": 125 * c,
        "joules_per_output_token": None if total is None else total / (125 * c),
        "per_device_joules": per,
    }


def validation(c: int, reasons: list[str]) -> dict[str, object]:
    return {
        "benchmark_type": "sa-bench",
        "concurrency": c,
        "window_file": f"windows/results_concurrency_{c}_gpus_4.json",
        "power_coverage_valid": not reasons,
        "reason_codes": reasons,
        "per_device_max_sample_gap_seconds": {"n1/GPU-a": 1.0},
    }


def manifest_doc(**over: object) -> dict[str, object]:
    doc: dict[str, object] = {
        "schema_version": 1,
        "producer": "srt-slurm.dcgm-power",
        "source_metric": "DCGM_FI_DEV_POWER_USAGE",
        "unit": "W",
        "required": True,
        "status": "complete",
        "publication_valid": False,
        "expected_windows": [{"benchmark_type": "sa-bench", "concurrency": c} for c in (4, 16)],
        "window_validations": [
            validation(4, []),
            validation(16, ["measurement_window_not_bracketed"]),
        ],
        "artifact_errors": [],
        "reason_codes": ["sample_gap_exceeded"],
    }
    doc.update(over)
    return doc


def write_csv(path: Path, header: list[str], rows: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        for row in rows:
            w.writerow([row.get(col, "") for col in header])


def leg_a(host: str, t: float, total: float | str) -> list[dict[str, object]]:
    """One leg A sample: a row per socket, the node total repeated."""
    return [
        {"schema_version": 4, "timestamp_unix": t, "hostname": host, "source": "acpi",
         "sensor": f"power{s}", "socket_id": s, "power_w": 1.0, "total_power_w": total}
        for s in (0, 1)
    ]  # fmt: skip


def leg_b(host: str, t: float, total: float) -> list[dict[str, object]]:
    return [
        {"schema_version": 1, "timestamp_unix": t, "hostname": host, "source": "acpi",
         "sensor": "Grace Power Socket 0", "socket_id": 0, "power_w": total,
         "total_power_w": total}
    ]  # fmt: skip


def write_power(log: Path, *, manifest: dict[str, object] | None = None) -> None:
    power = log / "power"
    power.mkdir(parents=True)
    (power / "manifest.json").write_text(json.dumps(manifest or manifest_doc(), indent=2))
    windows = [
        window(4, 1000.0, 1010.0, {"n1/0": 1500.0, "n2/0": 1700.25, "n1/1": 1600.0}, 4800.25),
        window(16, 2000.0, 2100.0, {"n1/0": 9000.5}, None),
    ]
    (power / "energy.json").write_text(json.dumps({"schema_version": 1, "windows": windows}))
    # leg A: n1 brackets window 4 (with a blank-total sample inside), n2 starts too late
    write_csv(
        log / "cpu_power" / "samples.csv",
        LEG_A_HEADER,
        [
            *leg_a("n1", 999.0, 200.0),
            *leg_a("n1", 1004.0, 300.0),
            *leg_a("n1", 1006.0, ""),
            *leg_a("n1", 1012.0, 260.0),
            *leg_a("n2", 1001.0, 999.0),
            *leg_a("n2", 1011.0, 999.0),
        ],
    )
    # leg B: n2 brackets both windows; n1 also brackets window 4 but leg A is preferred
    write_csv(
        power / "cpu" / "samples.csv",
        LEG_B_HEADER,
        [
            *leg_b("n1", 990.0, 5000.0),
            *leg_b("n1", 1020.0, 5000.0),
            *leg_b("n2", 995.0, 100.0),
            *leg_b("n2", 1015.0, 150.0),
            *leg_b("n2", 1990.0, 80.0),
            *leg_b("n2", 2110.0, 80.0),
        ],
    )
