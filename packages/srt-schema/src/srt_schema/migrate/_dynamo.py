"""``dynamo.version/hash/wheel/cargo_patches`` -> ``dynamo.source`` (docs/recipes.md#migration rule
3, dynamo).

Precedence as in v1: a git ``hash`` wins over a ``wheel``, which wins over a PyPI ``version``;
whatever loses is dropped with a note. ``top_of_tree`` is still a schema-2 key and stays.
"""

from __future__ import annotations

from typing import Any

from srt_schema.migrate._context import Variant, scalar
from srt_schema.migrate._yaml import Moved, new_map, pop_key, put_key, to_plain

__all__ = ["fold_dynamo_source"]

_LEGACY = ("hash", "cargo_patches", "wheel", "version")


def fold_dynamo_source(v: Variant) -> None:
    dynamo = v.doc.get("dynamo")
    if not isinstance(dynamo, dict):
        return
    present = [key for key in dynamo if key in _LEGACY]
    if _contradictions(v, dynamo):
        return
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
    elif "version" in moves and "cargo_patches" not in moves:
        carrier = moves["version"]
        source["pypi"] = carrier.value
        dropped = [key for key in ("cargo_patches",) if key in moves]
        summary = f"dynamo.version -> dynamo.source.pypi: {carrier.value}"
    else:  # cargo_patches over the base's hash (checked by _contradictions)
        carrier = moves["cargo_patches"]
        source["patches"] = carrier.value
        dropped = [key for key in ("version",) if key in moves]
        summary = "dynamo.cargo_patches -> dynamo.source.patches (the base's dynamo.hash builds)"
    if all(value is None for value in source.values()):
        node: Any = None  # an override deleting the base's pin deletes the source
    else:
        node = new_map(source)
        if "rev" in source or "wheel" in source or "pypi" in source:
            _clear_base_source(v, node)
    keys = list(dynamo.keys())
    index = keys.index("install") + 1 if "install" in keys else min(first_index, len(keys))
    put_key(dynamo, "source", node, index=index, moved=carrier, indent=v.column(1))
    v.note(summary)
    for key in dropped:
        v.note(f"dropped dynamo.{key} (superseded by dynamo.source)")


def _set(value: Any) -> bool:
    return value is not None and value is not False


def _contradictions(v: Variant, dynamo: Any) -> bool:
    """Refuse two Dynamo sources in one variant; True when one was found."""
    own = {key: scalar(dynamo.get(key)) for key in ("hash", "wheel", "top_of_tree")}
    hash_, wheel, top = own["hash"], own["wheel"], own["top_of_tree"] is True
    found = False
    if _set(hash_) and top:
        v.refuse(
            "dynamo.hash",
            f"dynamo.hash {hash_!r} pins a commit but dynamo.top_of_tree: true builds the moving "
            "head; keep one: delete top_of_tree to build the commit, or delete hash to build HEAD",
        )
        found = True
    if _set(wheel) and top:
        v.refuse(
            "dynamo.wheel",
            f"dynamo.wheel {wheel!r} installs a nightly wheel but dynamo.top_of_tree: true builds "
            "the head from git; keep one: delete top_of_tree or delete wheel",
        )
        found = True
    if _set(hash_) and _set(wheel):
        v.refuse(
            "dynamo.wheel",
            f"dynamo.wheel {wheel!r} and dynamo.hash {hash_!r} name two Dynamo sources (a nightly "
            "wheel and a git build); keep one: delete wheel to build the commit, or delete hash "
            "to install the wheel",
        )
        found = True
    source = dynamo.get("source")
    if isinstance(source, dict):
        for key, field in (("hash", "rev"), ("wheel", "wheel"), ("cargo_patches", "patches")):
            legacy = dynamo.get(key)
            if _set(legacy) and to_plain(legacy) != to_plain(source.get(field)):
                v.refuse(
                    f"dynamo.{key}",
                    f"dynamo.{key} {to_plain(legacy)!r} and dynamo.source both say where Dynamo "
                    f"comes from; keep one: delete dynamo.{key}, or delete dynamo.source and "
                    "let migrate write it from the v1 keys",
                )
                found = True
    patches = scalar(dynamo.get("cargo_patches"))
    if patches and not _set(hash_) and not _set(v.merged("dynamo", "hash")):
        v.refuse(
            "dynamo.cargo_patches",
            "dynamo.cargo_patches patch a git build of Dynamo, but no dynamo.hash names the "
            "commit to build (a PyPI version or a wheel is installed unpatched); set dynamo.hash "
            "to the commit the patches apply to, or delete cargo_patches",
        )
        found = True
    if isinstance(wheel, str) and wheel.strip().endswith(".whl") and "/" not in wheel:
        v.refuse(
            "dynamo.wheel",
            f"dynamo.wheel {wheel!r} is a bare file name; v1 read dynamo.wheel as a nightly "
            "version (the reference installs ai_dynamo-<version>-py3-none-any.whl), so write the "
            "version (for example wheel: 1.2.0.dev20260426), or give the wheel file's path "
            "(absolute, or ./<name>.whl in the configs folder)",
        )
        found = True
    return found


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
