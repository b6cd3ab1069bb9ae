"""The schema-version gate: schema 2 loads; the v1 layout is refused with a pointer to migrate."""

from __future__ import annotations

from typing import Any

from srt_schema.errors import Issue, show_value
from srt_schema.structural import join_path

__all__ = [
    "CURRENT_SCHEMA",
    "V1_ONLY_KEYS",
    "check_schema_version",
    "schema_key_typo",
    "schema_typo_issue",
]

CURRENT_SCHEMA = 2

#: Keys that exist only in the pre-2.0 layout (docs/recipes.md#schema-gate), as dotted paths.
V1_ONLY_KEYS: tuple[str, ...] = (
    "backend",
    "infra",
    *(f"resources.{r}_{k}" for r in ("prefill", "decode", "agg") for k in ("nodes", "workers")),
    *(f"resources.{r}_critical" for r in ("prefill", "decode", "agg")),
    *(f"resources.gpus_per_{r}" for r in ("prefill", "decode", "agg")),
    "frontend.orchestrator_placement",
    "frontend.dedicated_node",
    "benchmark.client_placement",
    "benchmark.client_dedicated_node",
    "dynamo.version",
    "dynamo.hash",
    "dynamo.wheel",
    "dynamo.cargo_patches",
)


def _migrate_hint(file: str) -> str:
    return f"run `srtctl migrate -f {file} --in-place` to rewrite it"


def _present(doc: dict[str, Any], dotted: str) -> bool:
    node: Any = doc
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def schema_key_typo(doc: dict[str, Any]) -> str | None:
    """A top-level key that is a misspelling of ``schema`` (``schmea``, ``Schema``), if any."""
    import difflib  # only for a recipe without `schema:`: kept off srtctl's start-up

    for key in doc:
        if not isinstance(key, str) or key == "schema":
            continue
        folded = key.strip().lower()
        if folded == "schema" or difflib.get_close_matches(folded, ["schema"], cutoff=0.8):
            return key
    return None


def schema_typo_issue(key: str, file: str, path: str = "$") -> Issue:
    """The issue for ``key``, a misspelling of ``schema`` in the mapping at ``path``."""
    return Issue(
        file=file,
        path=join_path(path, key),
        message=(
            f"unknown key {show_value(key)}; did you mean `schema`? Write `schema: 2` "
            "(the key is lower case)"
        ),
    )


def check_schema_version(doc: dict[str, Any], *, file: str, path: str = "$") -> list[Issue]:
    """Issues that stop a document from loading as schema 2 (empty when it may proceed).

    ``path`` is where ``doc`` sits in its file (``$.base`` for an override file's base).
    """
    if "schema" not in doc:
        typo = schema_key_typo(doc)
        if typo is not None:
            return [schema_typo_issue(typo, file, path)]
        return [
            Issue(
                file=file,
                path=path,
                message=(
                    "recipe has no `schema:` key, which marks the pre-2.0 (v1) layout; schema 1 "
                    f"recipes no longer load. Declare `schema: 2` or {_migrate_hint(file)}"
                ),
            )
        ]
    version = doc["schema"]
    if isinstance(version, bool) or not isinstance(version, int) or version != CURRENT_SCHEMA:
        return [
            Issue(
                file=file,
                path=f"{path}.schema",
                message=(
                    f"schema {show_value(version)} is not supported; this srtctl loads schema 2 "
                    f"only. For an older recipe, {_migrate_hint(file)}"
                ),
            )
        ]
    found = [key for key in V1_ONLY_KEYS if _present(doc, key)]
    if found:
        return [
            Issue(
                file=file,
                path=f"{path}.{found[0]}",
                message=(
                    f"recipe uses the pre-2.0 (v1) layout: {', '.join(found)}. These keys no "
                    f"longer load; {_migrate_hint(file)}"
                ),
            )
        ]
    return []
