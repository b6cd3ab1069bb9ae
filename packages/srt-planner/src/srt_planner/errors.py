"""The srt-planner exception family: one base, one error per kind of failure."""

from __future__ import annotations

from srt_schema.errors import bound_message

__all__ = ["HostlistError", "PlannerError", "PlanningError"]


class PlannerError(Exception):
    """Base of every error srt-planner raises. Its message is bounded (``bound_message``): a
    recipe value echoed in it shows at most ~200 characters, the fix after it is kept."""

    def __init__(self, message: str) -> None:
        super().__init__(bound_message(message))


class PlanningError(PlannerError):
    """The recipe cannot be laid out on the allocation (names the role, the need, the supply)."""


class HostlistError(PlannerError):
    """A Slurm hostlist expression cannot be parsed."""
