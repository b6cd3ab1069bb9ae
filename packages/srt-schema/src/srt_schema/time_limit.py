"""Slurm's time-limit format (``slurm.time_limit``, ``default_time_limit``), read as seconds.

Slurm accepts ``M``, ``M:S``, ``H:M:S``, ``D-H``, ``D-H:M`` and ``D-H:M:S``, and ``UNLIMITED`` /
``INFINITE`` for no limit. The planner hands the seconds to a local run, which stops at the limit
as Slurm would (docs/planner.md#time-limit); validate refuses a value Slurm would not take.
"""

from __future__ import annotations

import re

__all__ = ["TIME_LIMIT_FORMATS", "time_limit_seconds"]

TIME_LIMIT_FORMATS = "MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS (or UNLIMITED)"
_DAYS = re.compile(r"^(\d+)-(\d+)(?::(\d+))?(?::(\d+))?$")
_PLAIN = re.compile(r"^(\d+)(?::(\d+))?(?::(\d+))?$")


def time_limit_seconds(text: str) -> int | None:
    """The limit in seconds; None for no limit. Raises ValueError for a value Slurm refuses."""
    value = text.strip()
    if value.upper() in ("UNLIMITED", "INFINITE"):
        return None
    days = _DAYS.match(value)
    if days is not None:
        d, h, m, s = (int(part) if part else 0 for part in days.groups())
        return ((d * 24 + h) * 60 + m) * 60 + s
    plain = _PLAIN.match(value)
    if plain is None:
        raise ValueError(f"{text!r} is not a Slurm time limit; write {TIME_LIMIT_FORMATS}")
    parts = [int(part) for part in plain.groups() if part is not None]
    if len(parts) == 1:
        return parts[0] * 60
    if len(parts) == 2:
        return parts[0] * 60 + parts[1]
    return (parts[0] * 60 + parts[1]) * 60 + parts[2]
