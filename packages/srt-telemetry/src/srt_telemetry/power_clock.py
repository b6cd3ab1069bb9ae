"""The GPU power clock check: is every node's clock close enough to the head's?

Samples are stamped on the head's clock (`timestamp_source: head_node_unix_clock`), but the
windows and the exporters' own readings are only comparable if the nodes agree on the time. An
exporter that puts a timestamp on its samples lets us check: `power collect` records, per
endpoint, the largest (by magnitude) `sample timestamp - head-clock midpoint of the request` it
saw (`CollectorState.clock_offsets`), and finalization compares it with the tolerance.
dcgm-exporter prints no timestamps, so its nodes are `not_checkable` (said so in the manifest,
never counted as a failure).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from srt_telemetry.config import PowerConfig, PowerEndpoint
from srt_telemetry.power_manifest import ClockSyncFailure

__all__ = ["ClockCheck", "clock_checks", "clock_sync_failures", "clock_tolerance_seconds"]

ClockCheck = Literal["ok", "failed", "not_checkable"]


def clock_tolerance_seconds(config: PowerConfig) -> float:
    """`max(0.5 s, collect interval)`. 0.5 s is the floor of the window clock check
    (`measurement_window_clock_mismatch`): a node off by less moves nothing more than that check
    already tolerates. The collection interval, when longer, is the time resolution of the
    capture itself (a window edge is only located to within one cycle), and an exporter that
    stamps a value with the time it read it may serve a value up to one cycle old. Beyond the
    tolerance the window bracketing on the head clock is not trustworthy for that node."""
    return max(0.5, config.collect_interval_ms / 1000.0)


def clock_sync_failures(offsets: Mapping[str, float], tolerance: float) -> list[ClockSyncFailure]:
    """Every node whose recorded offset exceeds the tolerance, sorted by hostname."""
    return [
        ClockSyncFailure(hostname=host, offset_seconds=offset)
        for host, offset in sorted(offsets.items())
        if abs(offset) > tolerance
    ]


def clock_checks(
    endpoints: Sequence[PowerEndpoint], offsets: Mapping[str, float], tolerance: float
) -> dict[str, ClockCheck]:
    """Per endpoint hostname (and per host with a recorded offset): `ok`, `failed`, or
    `not_checkable` (its exporter stamped no sample, or never answered)."""
    hosts = sorted({ep.hostname for ep in endpoints} | set(offsets))
    out: dict[str, ClockCheck] = {}
    for host in hosts:
        offset = offsets.get(host)
        if offset is None:
            out[host] = "not_checkable"
        else:
            out[host] = "failed" if abs(offset) > tolerance else "ok"
    return out
