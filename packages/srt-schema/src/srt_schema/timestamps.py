"""The UTC timestamp formats our files and bodies use: one helper per format, named for it.

Pure: each takes the moment (epoch seconds, or a datetime; a naive one is local time) and never
reads the clock. Every package that writes a timestamp formats it here, so a format is spelled
once (docs/telemetry-and-bench.md#timestamps lists which file uses which).
"""

from __future__ import annotations

import datetime as dt

__all__ = ["iso_micros_z", "iso_millis_offset", "iso_millis_z", "iso_seconds_z"]


def _utc(moment: float | dt.datetime) -> dt.datetime:
    if isinstance(moment, dt.datetime):
        return moment.astimezone(dt.UTC)
    return dt.datetime.fromtimestamp(moment, tz=dt.UTC)


def iso_seconds_z(moment: float | dt.datetime) -> str:
    """``2026-11-29T15:12:09Z``: the status API's times, lockfile and metadata stamps."""
    return _utc(moment).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_millis_offset(moment: float | dt.datetime) -> str:
    """``2026-11-29T15:12:09.250+00:00``: the runtime's status events, restarts and lockfile."""
    return _utc(moment).isoformat(timespec="milliseconds")


def iso_millis_z(moment: float | dt.datetime) -> str:
    """``2026-11-29T15:12:09.250Z``: the status collector's own records."""
    return iso_millis_offset(moment).replace("+00:00", "Z")


def iso_micros_z(moment: float | dt.datetime) -> str:
    """``2026-11-29T15:12:09.250000Z``: ``benchmark-rollup.json``'s ``timestamp`` (as the
    reference writes it)."""
    return _utc(moment).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
