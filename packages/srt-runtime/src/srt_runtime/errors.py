"""The srt_runtime exception family.

Every error the supervisor raises is a :class:`SupervisorError`; only ``__main__`` turns them into
exit codes and prints them. Messages say what failed, where (process, node, log) and what to do.
"""

from __future__ import annotations

__all__ = [
    "AbortError",
    "HealthGateError",
    "LaunchError",
    "PlanLoadError",
    "ReadinessError",
    "StageError",
    "SupervisorError",
]


class SupervisorError(Exception):
    """Base class of every error raised by srt_runtime."""


class PlanLoadError(SupervisorError):
    """``plan.json`` is missing or does not decode as a JobPlan."""


class LaunchError(SupervisorError):
    """A launcher could not start a process (missing program, bad working directory...)."""


class StageError(SupervisorError):
    """A stage failed (host_setup, a one-shot step, a service that never became ready...).

    ``process`` names the process to blame, if there is one (the diagnosis shows its log).
    """

    def __init__(self, message: str, *, process: str | None = None) -> None:
        super().__init__(message)
        self.process = process


class ReadinessError(StageError):
    """A process did not pass its readiness probe, or died before it did."""


class HealthGateError(StageError):
    """The deployment did not become healthy within the health gate's deadline."""


class AbortError(SupervisorError):
    """The run was stopped: a critical failure was detected or a signal arrived.

    Raised out of every wait so the stages unwind; the supervisor records the reason before.
    """
