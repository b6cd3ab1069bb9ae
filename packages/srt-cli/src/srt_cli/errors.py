"""The srt-cli exception family and the exit-code table (README.md, "Exit codes").

Every error a command reports is a :class:`CliError` carrying its exit code; click prints it and
exits. Library exceptions are translated at the boundary by :func:`translated`, which imports the
library error modules only when an error actually happens (keeps ``srtctl --help`` fast).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

import click

__all__ = [
    "EXIT_BUG",
    "EXIT_OK",
    "EXIT_PLANNING",
    "EXIT_SLURM",
    "EXIT_USAGE",
    "CliError",
    "CliUsageError",
    "InternalError",
    "InvalidRecipeError",
    "PlanFailedError",
    "SlurmError",
    "translated",
]

EXIT_OK = 0
#: An unexpected exception: a bug in srtctl (never the answer to bad input).
EXIT_BUG = 1
#: A usage error or a recipe / srtslurm.yaml / --set that does not load.
EXIT_USAGE = 2
#: The recipe loads but cannot be laid out (srt_planner.PlanningError).
EXIT_PLANNING = 3
#: Slurm, the local run, or the environment (sbatch failed, preflight found a missing path).
EXIT_SLURM = 4


#: A message shows at most this many lines (one per issue); the rest are counted.
MAX_LINES = 100
#: A message is at most this many characters in all (whole lines are dropped and counted).
MAX_CHARS = 16_384


def _bounded(message: str) -> str:
    """At most ~200 characters of one value per line, MAX_LINES lines and MAX_CHARS in all."""
    from srt_schema.errors import bound_message

    lines = [bound_message(line) for line in message.splitlines()]
    kept: list[str] = []
    size = 0
    for line in lines[:MAX_LINES]:
        size += len(line) + 1
        if size > MAX_CHARS and kept:
            break
        kept.append(line)
    if len(kept) < len(lines):
        kept.append(f"... and {len(lines) - len(kept)} more lines")
    return "\n".join(kept)


class CliError(click.ClickException):
    """An error the CLI reports in one short message (no traceback) and exits with."""

    exit_code = 1

    def __init__(self, message: str, *, issues: tuple[dict[str, str], ...] = ()) -> None:
        super().__init__(_bounded(message))
        #: ``{"file", "path", "message"}`` per problem, for ``--json`` output.
        self.issues = issues

    def show(self, file: IO[Any] | None = None) -> None:
        out = file if file is not None else sys.stderr
        # The first line says what failed; further lines (issues, tool output) are shown as is.
        first, *rest = self.format_message().splitlines() or [""]
        click.echo(f"error: {first}", file=out)
        for line in rest:
            click.echo(line, file=out)


class CliUsageError(CliError):
    """Bad flags or arguments (exit 2)."""

    exit_code = EXIT_USAGE


class InvalidRecipeError(CliError):
    """A recipe, override file, srtslurm.yaml or migration input that does not load (exit 2)."""

    exit_code = EXIT_USAGE


class PlanFailedError(CliError):
    """The recipe cannot be planned onto nodes (exit 3)."""

    exit_code = EXIT_PLANNING


class SlurmError(CliError):
    """sbatch, the local runtime, or a preflight check failed (exit 4)."""

    exit_code = EXIT_SLURM


class InternalError(CliError):
    """An exception nothing translated: a bug, reported in one line (exit 1)."""

    exit_code = EXIT_BUG

    @classmethod
    def from_exception(cls, command: str | None, exc: BaseException) -> InternalError:
        where = f"srtctl {command}" if command else "srtctl"
        detail = str(exc).splitlines()[0] if str(exc) else ""
        shown = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
        return cls(
            f"{where} stopped on an internal error ({shown}); this is a bug in srtctl: please "
            "report it with the command and its input (SRTCTL_DEBUG=1 shows the traceback)"
        )


@contextmanager
def translated(where: str | None = None) -> Iterator[None]:
    """Turn srt_schema / srt_planner exceptions raised inside the block into CliErrors.

    ``where`` (a file or ``file:variant``) prefixes planning errors, which do not name the file.
    """
    try:
        yield
    except CliError:
        raise
    except Exception as exc:
        mapped = _map(exc, where)
        if mapped is None:
            raise
        raise mapped from exc


def _map(exc: Exception, where: str | None) -> CliError | None:
    module = type(exc).__module__
    if module.startswith("srt_schema"):
        from srt_schema.errors import RecipeError, SchemaError
        from srt_schema.setpaths import OverrideSyntaxError

        if isinstance(exc, OverrideSyntaxError):
            return CliUsageError(f"bad --set/--unset: {exc}")
        if isinstance(exc, RecipeError):
            issues = tuple(
                {"file": i.file, "path": i.path, "message": i.message} for i in exc.issues
            )
            return InvalidRecipeError(str(exc), issues=issues)
        if isinstance(exc, SchemaError):
            return InvalidRecipeError(str(exc))
    if module.startswith("srt_planner"):
        from srt_planner.errors import PlannerError, PlanningProblemsError

        if isinstance(exc, PlanningProblemsError):
            # One line per problem, each naming the file, as load errors are shown.
            lines = [f"{where}: {p}" if where else p for p in exc.problems]
            issues = tuple(_planning_issue(where, p) for p in exc.problems)
            return PlanFailedError("\n".join(lines), issues=issues)
        if isinstance(exc, PlannerError):
            return PlanFailedError(f"{where}: {exc}" if where else str(exc))
    return None


def _planning_issue(where: str | None, problem: str) -> dict[str, str]:
    """``{"file", "path", "message"}`` of one planning problem (``$.x.y: message``)."""
    path, sep, message = problem.partition(": ")
    if not (sep and path.startswith("$")):
        path, message = "$", problem
    return {"file": where or "", "path": path, "message": message}
