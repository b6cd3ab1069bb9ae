"""The srt-planner exception family: one base, one error per kind of failure."""

from __future__ import annotations

__all__ = ["HostlistError", "PlannerError", "PlanningError"]


class PlannerError(Exception):
    """Base of every error srt-planner raises."""


class PlanningError(PlannerError):
    """The recipe cannot be laid out on the allocation (names the role, the need, the supply)."""


class HostlistError(PlannerError):
    """A Slurm hostlist expression cannot be parsed."""
