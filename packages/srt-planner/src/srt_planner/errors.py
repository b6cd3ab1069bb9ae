"""The srt-planner exception family: one base, one error per kind of failure."""

from __future__ import annotations

from collections.abc import Iterable

from srt_schema.errors import bound_message

__all__ = ["HostlistError", "PlannerError", "PlanningError", "PlanningProblemsError"]


class PlannerError(Exception):
    """Base of every error srt-planner raises. Its message is bounded (``bound_message``): a
    recipe value echoed in it shows at most ~200 characters, the fix after it is kept."""

    def __init__(self, message: str) -> None:
        super().__init__(bound_message(message))


class PlanningError(PlannerError):
    """The recipe cannot be laid out on the allocation (names the role, the need, the supply)."""


class PlanningProblemsError(PlanningError):
    """Several independent planning problems found in one pass (every role that does not fit,
    every service that cannot be placed), like a load error's issues: ``problems`` in recipe
    order, each bounded on its own, rendered one per line."""

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems: tuple[str, ...] = tuple(bound_message(p) for p in problems)
        if not self.problems:
            raise ValueError("PlanningProblemsError needs at least one problem")
        # Not PlannerError.__init__: its 2 kB bound is per problem here, not for the whole list.
        Exception.__init__(self, "\n".join(self.problems))


class HostlistError(PlannerError):
    """A Slurm hostlist expression cannot be parsed."""
