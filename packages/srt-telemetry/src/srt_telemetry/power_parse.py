"""Extract per-GPU power readings from a DCGM exporter body (pure)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from srt_telemetry.errors import ParseError
from srt_telemetry.promtext import parse_text

__all__ = ["POWER_METRIC", "PowerReading", "PowerScrape", "parse_power"]

POWER_METRIC = "DCGM_FI_DEV_POWER_USAGE"


@dataclass(frozen=True, slots=True)
class PowerReading:
    gpu_index: int
    gpu_uuid: str
    power_w: float


@dataclass(slots=True)
class PowerScrape:
    readings: list[PowerReading] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    #: The newest timestamp (Unix ms) an exporter put on a power sample; None: it stamps none
    #: (dcgm-exporter itself prints none), so its clock cannot be checked.
    timestamp_ms: int | None = None


def parse_power(body: str) -> PowerScrape:
    """Readings sorted by GPU number, plus the reason codes of every dropped sample."""
    out = PowerScrape()
    try:
        parsed = parse_text(body)
    except ParseError:
        out.reasons.append("endpoint_parse_error")
        return out
    by_gpu: dict[int, list[PowerReading]] = {}
    seen_power = False
    for index, (name, labels, value) in enumerate(
        zip(parsed.names, parsed.labels, parsed.values, strict=True)
    ):
        if name != POWER_METRIC:
            continue
        seen_power = True
        stamp = parsed.timestamps_ms.get(index)
        if stamp is not None and (out.timestamp_ms is None or stamp > out.timestamp_ms):
            out.timestamp_ms = stamp
        lab = dict(labels)
        if lab.get("GPU_I_ID") or lab.get("GPU_I_PROFILE"):
            out.reasons.append("mig_instance_unsupported")
            continue
        gpu_text = lab.get("gpu", "")
        if not gpu_text.isdigit():
            out.reasons.append("gpu_index_missing")
            continue
        uuid = lab.get("UUID", "")
        if not uuid:
            out.reasons.append("gpu_uuid_missing")
            continue
        if not math.isfinite(value) or value < 0:
            out.reasons.append("invalid_power_value")
            continue
        gpu = int(gpu_text)
        by_gpu.setdefault(gpu, []).append(PowerReading(gpu, uuid, value))
    if not seen_power:
        out.reasons.append("power_metric_missing")
    for gpu in sorted(by_gpu):
        if len(by_gpu[gpu]) > 1:
            out.reasons.append("duplicate_power_metric")
            continue
        out.readings.append(by_gpu[gpu][0])
    return out
