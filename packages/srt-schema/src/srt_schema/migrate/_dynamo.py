"""``dynamo.version/hash/wheel/cargo_patches`` -> ``dynamo.source`` (docs/recipes.md#migration rule
3, dynamo).

Precedence as in v1: a git ``hash`` wins over a ``wheel``, which wins over a PyPI ``version``;
whatever loses is dropped with a note. ``top_of_tree`` is still a schema-2 key and stays.
"""

from __future__ import annotations

from typing import Any

from srt_schema.migrate._context import Variant
from srt_schema.migrate._yaml import Moved, new_map, pop_key, put_key

__all__ = ["fold_dynamo_source"]

_LEGACY = ("hash", "cargo_patches", "wheel", "version")


def fold_dynamo_source(v: Variant) -> None:
    dynamo = v.doc.get("dynamo")
    if not isinstance(dynamo, dict):
        return
    present = [key for key in dynamo if key in _LEGACY]
    if not present:
        if dynamo.get("top_of_tree") is True:
            v.note("kept dynamo.top_of_tree: true (no source equivalent; pin source.rev instead)")
        return
    first_index = list(dynamo.keys()).index(present[0])
    moves: dict[str, Moved] = {key: pop_key(dynamo, key) for key in present}
    legacy = ", ".join(f"dynamo.{key}" for key in present)
    if "source" in dynamo:
        v.note(f"dynamo.source already set; kept it and dropped legacy {legacy}")
        return
    if dynamo.get("top_of_tree") is True:
        v.note(f"kept dynamo.top_of_tree: true and dropped {legacy} (top_of_tree builds HEAD)")
        return
    source: dict[str, Any] = {}
    carrier: Moved
    dropped: list[str]
    if "hash" in moves:
        carrier = moves["hash"]
        source["rev"] = carrier.value
        if "cargo_patches" in moves:
            source["patches"] = moves["cargo_patches"].value
        dropped = [key for key in ("wheel", "version") if key in moves]
        summary = f"dynamo.hash -> dynamo.source.rev: {carrier.value}"
    elif "wheel" in moves:
        carrier = moves["wheel"]
        source["wheel"] = carrier.value
        dropped = [key for key in ("version", "cargo_patches") if key in moves]
        summary = f"dynamo.wheel -> dynamo.source.wheel: {carrier.value}"
    elif "version" in moves:
        carrier = moves["version"]
        source["pypi"] = carrier.value
        dropped = [key for key in ("cargo_patches",) if key in moves]
        summary = f"dynamo.version -> dynamo.source.pypi: {carrier.value}"
    else:
        v.note("dropped dynamo.cargo_patches (it patches a git build; set dynamo.source.rev)")
        return
    if all(value is None for value in source.values()):
        node: Any = None  # an override deleting the base's pin deletes the source
    else:
        node = new_map(source)
        _clear_base_source(v, node)
    keys = list(dynamo.keys())
    index = keys.index("install") + 1 if "install" in keys else min(first_index, len(keys))
    put_key(dynamo, "source", node, index=index, moved=carrier, indent=v.column(1))
    v.note(summary)
    for key in dropped:
        v.note(f"dropped dynamo.{key} (superseded by dynamo.source)")


def _clear_base_source(v: Variant, source: Any) -> None:
    """An override's source replaces the base's: null out the base's other source kinds."""
    if not v.is_override or v.base_v2 is None:
        return
    base_dynamo = v.base_v2.get("dynamo")
    base_source = base_dynamo.get("source") if isinstance(base_dynamo, dict) else None
    if not isinstance(base_source, dict):
        return
    for key in base_source:
        if key not in source:
            source[key] = None
            v.note(f"dynamo.source.{key}: null (the base pins another source)")
