"""The state one variant's migration works on: its mapping, the base it merges over, its notes.

A plain recipe is one variant with no base. In an override file the base is migrated first, then
each ``override_*`` / ``zip_override_*`` section, looking up anything it does not set in the base
as it was *before* migration (``base_v1``) and, for lists that replace rather than merge
(``services``), in the base as it is *after* migration (``base_v2``).
"""

from __future__ import annotations

from typing import Any

from srt_schema.migrate._version import v1_keys
from srt_schema.migrate._yaml import new_map, new_seq, put_key, to_plain

__all__ = ["Variant", "scalar"]

_MISSING = object()


def scalar(value: Any) -> Any:
    """A zip section may hold a list where a recipe holds a scalar: take its first real value."""
    if isinstance(value, list):
        for item in value:
            if item is not None and not isinstance(item, list):
                return item
        return None
    return value


class Variant:
    """One recipe (or override section) being rewritten in place."""

    def __init__(
        self,
        doc: Any,
        *,
        label: str | None,
        from_version: int,
        indent: int,
        base_v1: dict[str, Any] | None = None,
        base_v2: Any = None,
    ) -> None:
        self.doc = doc
        self.label = label
        self.from_version = from_version
        self.indent = indent
        self.base_v1: dict[str, Any] = base_v1 or {}
        self.base_v2 = base_v2
        self.notes: list[str] = []
        #: contradictions found: ``$.<path>: <what and the fix>`` (the file is not migrated)
        self.refusals: list[str] = []
        self._original = to_plain(doc)
        self.had_v1_layout = bool(v1_keys(doc))

    # ------------------------------------------------------------------ identity

    @property
    def is_override(self) -> bool:
        """An ``override_*`` / ``zip_override_*`` section (merged over a base)."""
        return self.label is not None and self.label != "base"

    @property
    def is_zip(self) -> bool:
        return self.label is not None and self.label.startswith("zip_override_")

    def note(self, text: str) -> None:
        self.notes.append(f"{self.label}: {text}" if self.label else text)

    def refuse(self, path: str, message: str) -> None:
        """Record a contradiction at ``path`` (dotted, below this section): the file is refused.

        The migration never picks one side of a contradiction; the message says what to write.
        """
        where = f"$.{self.label}.{path}" if self.label else f"$.{path}"
        self.refusals.append(f"{where}: {message}")

    def merged(self, *path: str) -> Any:
        """The value this variant ends up with: its own (a null deletes), else the base's.

        Unlike :meth:`effective`, an explicit null is absent, in a plain recipe as in an override.
        """
        value = _get(self._original, path, _MISSING)
        if value is _MISSING and self.is_override:
            value = _get(self.base_v1, path, None)
        return None if value is _MISSING else scalar(value)

    def column(self, depth: int) -> int:
        """Column of the keys of a mapping nested ``depth`` levels below this variant's root."""
        base_depth = 1 if self.label is not None else 0
        return (base_depth + depth) * self.indent

    # ------------------------------------------------------------------ lookups

    def original(self, *path: str) -> Any:
        """A value as this variant wrote it before migration (None when absent)."""
        return _get(self._original, path, None)

    def effective(self, *path: str) -> Any:
        """The variant's original value, else the base's original value (None when absent)."""
        value = _get(self._original, path, _MISSING)
        if value is _MISSING or (self.is_override and value is None):
            value = _get(self.base_v1, path, None)
        return scalar(value)

    def base_has(self, *path: str) -> bool:
        return _get(self.base_v1, path, _MISSING) is not _MISSING

    def role_exists(self, role: str) -> bool:
        """Whether ``roles.<role>`` exists in this variant or (for overrides) in the base."""
        roles = self.doc.get("roles")
        if isinstance(roles, dict) and role in roles:
            return True
        if self.is_override and self.base_v2 is not None:
            base_roles = self.base_v2.get("roles")
            return isinstance(base_roles, dict) and role in base_roles
        return False

    # ------------------------------------------------------------------ edits

    def child_map(self, parent: Any, key: str, *, index: int | None = None) -> Any:
        """``parent[key]`` as a mapping, inserted (at ``index``, default the end) when absent."""
        current = parent.get(key)
        if isinstance(current, dict):
            return current
        mapping = new_map()
        put_key(parent, key, mapping, index=index)
        return mapping

    def literal_list(self, items: list[Any]) -> Any:
        """A list value as written into this section: zip sections zip lists, so wrap it once."""
        seq = new_seq(items)
        return new_seq([seq]) if self.is_zip else seq


def _get(data: Any, path: tuple[str, ...], default: Any) -> Any:
    current = data
    for part in path:
        if not isinstance(current, dict) or part not in current:
            return default
        current = current[part]
    return current
