"""The srt_schema exception family.

Every problem with a recipe or a cluster config is a :class:`RecipeError` that carries one or more
:class:`Issue` values (file, ``$.path``, message), so a caller can show all of a file's problems at
once, as text or as JSON. Only the CLI turns these into exit codes.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

__all__ = [
    "ClusterConfigError",
    "Issue",
    "MigrationError",
    "RecipeError",
    "SchemaError",
]


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
        self.issues: tuple[Issue, ...] = tuple(issues)
        if not self.issues:
            raise ValueError("RecipeError needs at least one issue")
        super().__init__("\n".join(issue.render() for issue in self.issues))

    @classmethod
    def single(cls, file: str, path: str, message: str) -> RecipeError:
        return cls([Issue(file=file, path=path, message=message)])


class ClusterConfigError(RecipeError):
    """An ``srtslurm.yaml`` that does not load (never silently ignored)."""


class MigrationError(SchemaError):
    """A v1 recipe that cannot be migrated (parse error, duplicate key, unsupported schema)."""

    def __init__(self, file: str, message: str) -> None:
        self.file = file
        self.message = message
        super().__init__(f"{file}: {message}")
