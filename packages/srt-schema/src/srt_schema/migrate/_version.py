"""Schema-version detection and the list of v1-only keys (docs/recipes.md#schema-gate, #migration
rule 1)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from srt_schema.errors import MigrationError

__all__ = ["CURRENT_VERSION", "KNOWN_VERSIONS", "detect_version", "v1_keys"]

CURRENT_VERSION = 2
KNOWN_VERSIONS = (1, 2)

_ROLE_PREFIXES = ("prefill", "decode", "agg")
_V1_RESOURCES = frozenset(
    [f"{role}_{field}" for role in _ROLE_PREFIXES for field in ("nodes", "workers", "critical")]
    + [f"gpus_per_{role}" for role in _ROLE_PREFIXES]
)
_V1_NESTED: dict[str, frozenset[str]] = {
    "resources": _V1_RESOURCES,
    "frontend": frozenset({"orchestrator_placement", "dedicated_node"}),
    "benchmark": frozenset({"client_placement", "client_dedicated_node"}),
    "dynamo": frozenset({"version", "hash", "wheel", "cargo_patches"}),
}
_V1_TOP = ("backend", "infra")


def detect_version(document: Mapping[str, Any], file: str) -> int:
    """The schema version a document declares: absent means 1 (the pre-2.0 layout)."""
    value = document.get("schema")
    if value is None and "base" in document and isinstance(document["base"], Mapping):
        value = document["base"].get("schema")
    if value is None:
        return 1
    if isinstance(value, bool) or not isinstance(value, int):
        raise MigrationError(
            file, f"schema must be an integer version, got {value!r}; write schema: 1 or 2"
        )
    if value not in KNOWN_VERSIONS:
        raise MigrationError(
            file, f"schema {value} is not supported; known versions: {list(KNOWN_VERSIONS)}"
        )
    return value


def v1_keys(recipe: Mapping[str, Any]) -> list[str]:
    """Dotted v1-only keys present in one recipe (or one override section), in document order."""
    found: list[str] = []
    for key, value in recipe.items():
        if key in _V1_TOP:
            found.append(str(key))
        elif key in _V1_NESTED and isinstance(value, Mapping):
            found.extend(f"{key}.{sub}" for sub in value if sub in _V1_NESTED[key])
    return found
