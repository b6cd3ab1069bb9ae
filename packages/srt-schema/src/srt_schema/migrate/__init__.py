"""Rewrite a schema-1 (v1) recipe as a schema-2 recipe, keeping comments and key order.

``migrate_text`` is pure: text in, text out. It handles plain recipes, sweep files, override files
(``base`` plus ``override_*`` / ``zip_override_*``; every section is migrated with the base as
context and ``schema: 2`` goes at the top, next to ``base``) and lockfiles (the ``lock:`` section is
left untouched). It needs the optional extra ``srt-schema[migrate]`` (ruamel.yaml).

>>> result = migrate_text("name: x\\nbackend:\\n  type: vllm\\n", file="x.yaml")
>>> print(result.text, end="")
schema: 2
name: x
engine: vllm
"""

from __future__ import annotations

import msgspec

from srt_schema.migrate._document import migrate_document
from srt_schema.migrate._version import CURRENT_VERSION

__all__ = ["MigrationResult", "migrate_text"]


class MigrationResult(msgspec.Struct, frozen=True, kw_only=True):
    """The migrated text and what was done to get it."""

    text: str
    changed: bool
    from_version: int
    to_version: int
    notes: tuple[str, ...]


def migrate_text(text: str, *, file: str) -> MigrationResult:
    """Migrate one recipe file's text; ``file`` only names it in errors.

    Raises :class:`srt_schema.errors.MigrationError` for a file that cannot be migrated (YAML
    that does not parse, a duplicate key, an unsupported ``schema``, ruamel.yaml missing).
    """
    outcome = migrate_document(text, file)
    return MigrationResult(
        text=outcome.text,
        changed=outcome.text != text,
        from_version=outcome.from_version,
        to_version=CURRENT_VERSION,
        notes=tuple(outcome.notes),
    )
