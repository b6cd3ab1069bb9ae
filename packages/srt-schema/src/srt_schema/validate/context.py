"""What every cross-field rule sees: the typed recipe, the raw document, and where it came from."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from srt_schema.errors import Issue
from srt_schema.recipe import Recipe
from srt_schema.roles import (
    EngineConfig,
    ResolvedRole,
    engine_of,
    engine_type,
    is_disaggregated,
    resolve_roles,
)

__all__ = ["Context", "Rule"]


@dataclass(frozen=True)
class Context:
    recipe: Recipe
    raw: dict[str, Any]
    file: str
    roles: tuple[ResolvedRole, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "roles", resolve_roles(self.recipe))

    def issue(self, path: str, message: str) -> Issue:
        return Issue(file=self.file, path=path, message=message)

    def engine(self, role: str) -> EngineConfig:
        return engine_of(self.recipe, role)

    def engine_type(self, role: str) -> str:
        return engine_type(engine_of(self.recipe, role))

    def role_engine_types(self) -> dict[str, str]:
        """Engine type per declared role (every role, also those without workers)."""
        return {r.name: self.engine_type(r.name) for r in self.roles}

    @property
    def disaggregated(self) -> bool:
        return is_disaggregated(self.recipe)

    def has_raw(self, *path: str) -> bool:
        node: Any = self.raw
        for part in path:
            if not isinstance(node, dict) or part not in node:
                return False
            node = node[part]
        return True

    def workers(self, role: str) -> int:
        return sum(r.workers for r in self.roles if r.name == role)


Rule = Callable[[Context], Iterator[Issue]]
