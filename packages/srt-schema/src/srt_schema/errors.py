"""The srt_schema exception family.

Every problem with a recipe or a cluster config is a :class:`RecipeError` that carries one or more
:class:`Issue` values (file, ``$.path``, message), so a caller can show all of a file's problems at
once, as text or as JSON. Only the CLI turns these into exit codes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import msgspec

__all__ = [
    "MAX_MESSAGE_CHARS",
    "MAX_VALUE_CHARS",
    "ClusterConfigError",
    "Issue",
    "MigrationError",
    "RecipeError",
    "SchemaError",
    "bound_message",
    "clip",
    "render_issues",
    "show_value",
]

#: A message echoes at most this many characters of one value.
MAX_VALUE_CHARS = 200
#: No message is longer than this (a safety net under :func:`bound_message`).
MAX_MESSAGE_CHARS = 2000

# Longer than what ``clip`` leaves of one value (its 200 characters plus ``...``), so a value
# clipped once is not clipped again.
_LONG_RUN = re.compile(rf"\S{{{MAX_VALUE_CHARS + 50},}}")


def clip(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    """``text``, or its first ``limit`` characters plus ``... (N characters)`` when longer."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


def show_value(value: Any) -> str:
    """A value as a message shows it: its ``repr``, at most ~200 characters of it."""
    return clip(repr(value))


def bound_message(text: str) -> str:
    """``text`` with every run of 250 or more non-blank characters clipped, at most 2 kB.

    The safety net under every message: a rule that echoes a 1 MB value still gives a short
    message (the value is clipped, the fix that follows it is kept).
    """
    text = _LONG_RUN.sub(lambda m: clip(m.group(0)), text)
    if len(text) <= MAX_MESSAGE_CHARS:
        return text
    return clip(text, MAX_MESSAGE_CHARS)


class Issue(msgspec.Struct, frozen=True, kw_only=True):
    """One problem: where it is and what to do about it."""

    file: str
    path: str
    message: str

    def render(self) -> str:
        where = self.file if self.path in ("", "$") else f"{self.file}: {self.path}"
        return f"{where}: {self.message}"


class SchemaError(Exception):
    """Base class of every error raised by srt_schema."""


class RecipeError(SchemaError):
    """A recipe (or override file, or sweep) that does not load; lists every issue found."""

    def __init__(self, issues: Iterable[Issue]) -> None:
        self.issues: tuple[Issue, ...] = tuple(_bounded(i) for i in issues)
        if not self.issues:
            raise ValueError("RecipeError needs at least one issue")
        super().__init__(render_issues(self.issues))

    @classmethod
    def single(cls, file: str, path: str, message: str) -> RecipeError:
        return cls([Issue(file=file, path=path, message=message)])


#: The text of an error shows at most this many issues (``--json`` lists them all).
MAX_SHOWN_ISSUES = 50
_ALLOWED = "allowed here: "


def render_issues(issues: tuple[Issue, ...]) -> str:
    """One line per issue, at most :data:`MAX_SHOWN_ISSUES`; a list of allowed keys is shown once
    (a later issue with the same list says so instead of repeating it)."""
    lines: list[str] = []
    seen: set[str] = set()
    for issue in issues[:MAX_SHOWN_ISSUES]:
        line = issue.render()
        head, sep, allowed = line.partition(_ALLOWED)
        if sep and allowed in seen:
            line = f"{head}{_ALLOWED}as listed above"
        elif sep:
            seen.add(allowed)
        lines.append(line)
    if len(issues) > MAX_SHOWN_ISSUES:
        lines.append(f"... and {len(issues) - MAX_SHOWN_ISSUES} more issues")
    return "\n".join(lines)


def _bounded(issue: Issue) -> Issue:
    file, path = bound_message(issue.file), bound_message(issue.path)
    message = bound_message(issue.message)
    if (file, path, message) == (issue.file, issue.path, issue.message):
        return issue
    return Issue(file=file, path=path, message=message)


class ClusterConfigError(RecipeError):
    """An ``srtslurm.yaml`` that does not load (never silently ignored)."""


class MigrationError(SchemaError):
    """A v1 recipe that cannot be migrated (parse error, duplicate key, unsupported schema)."""

    def __init__(self, file: str, message: str) -> None:
        self.file = file
        self.message = bound_message(message)
        super().__init__(f"{file}: {self.message}")
