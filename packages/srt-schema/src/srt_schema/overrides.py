"""Override files: ``base`` plus ``override_<name>`` and ``zip_override_<group>`` variants.

docs/recipes.md#override-files. With no selector the variants are every ``override_*`` (sorted),
then every ``zip_override_*`` group (sorted); ``base`` itself is submitted only with the ``base``
selector (Q1). Pure functions over plain dicts.
"""

from __future__ import annotations

import copy
import fnmatch
import re
from typing import Any

import msgspec

from srt_schema.errors import Issue, RecipeError, clip, show_value
from srt_schema.gate import schema_key_typo, schema_typo_issue
from srt_schema.structural import join_path

__all__ = [
    "Variant",
    "check_layout",
    "check_selector",
    "deep_merge",
    "expand_variants",
    "is_override_file",
]

_OVERRIDE_KEY = re.compile(r"^(zip_)?override_")
_ZIP_INDEXED = re.compile(r"^(zip_override_[\w-]+)\[(\d+)\]$")
_SELECTOR = re.compile(r"^(base|override_\S+|zip_override_[\w-]+|zip_override_[\w-]+\[\d+\])$")


class Variant(msgspec.Struct, frozen=True, kw_only=True):
    """One job of an override file: ``suffix`` names it (``base``, ``tp64``, ``sweep_0``)."""

    suffix: str
    selector: str
    document: dict[str, Any]


def is_override_file(doc: dict[str, Any]) -> bool:
    return "base" in doc


def check_selector(selector: str, *, file: str) -> None:
    if not (_SELECTOR.match(selector) or "*" in selector or "?" in selector):
        raise RecipeError.single(
            file,
            "$",
            f"invalid selector {show_value(selector)}; use 'base', 'override_<name>', "
            "'zip_override_<name>', 'zip_override_<name>[N]', or a glob such as '*mtp*'",
        )


def deep_merge(base: dict[str, Any], variant: dict[str, Any]) -> dict[str, Any]:
    """Mappings merge recursively; lists and scalars replace; ``null`` deletes the key."""
    merged = copy.deepcopy(base)
    for key, value in variant.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def check_layout(doc: dict[str, Any], file: str) -> list[Issue]:
    """Every top-level key of an override file that is not where it belongs."""
    issues: list[Issue] = []
    for key, value in doc.items():
        if key in ("schema", "base"):
            continue
        path = join_path("$", key if isinstance(key, str) else str(key))
        shown = f"`{clip(key)}`" if isinstance(key, str) else show_value(key)
        if isinstance(key, str) and schema_key_typo({key: value}) is not None:
            issues.append(schema_typo_issue(key, file))
        elif not isinstance(key, str) or not _OVERRIDE_KEY.match(key):
            issues.append(
                Issue(
                    file=file,
                    path=path,
                    message=(
                        "an override file holds only `schema`, `base`, `override_<name>` and "
                        f"`zip_override_<group>` at the top level; move {shown} under `base`"
                    ),
                )
            )
        elif not isinstance(value, dict):
            issues.append(Issue(file=file, path=path, message="must be a mapping"))
    base = doc.get("base")
    if not isinstance(base, dict):
        got = "a list" if isinstance(base, list) else show_value(base)
        issues.append(
            Issue(file=file, path="$.base", message=f"must be a mapping (the recipe), got {got}")
        )
    return issues


def _list_lengths(node: dict[str, Any]) -> list[int]:
    lengths: list[int] = []
    for value in node.values():
        if isinstance(value, dict):
            lengths.extend(_list_lengths(value))
        elif isinstance(value, list):
            lengths.append(len(value))
    return lengths


def _zip_slice(node: dict[str, Any], i: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in node.items():
        if isinstance(value, dict):
            out[key] = _zip_slice(value, i)
        elif isinstance(value, list):
            out[key] = copy.deepcopy(value[0] if len(value) == 1 else value[i])
        else:
            out[key] = copy.deepcopy(value)
    return out


def _zip_count(key: str, section: dict[str, Any], file: str) -> int:
    lengths = _list_lengths(section)
    if not lengths:
        raise RecipeError.single(
            file, f"$.{key}", "a zip_override section needs list values to zip; found none"
        )
    if 0 in lengths:
        raise RecipeError.single(
            file, f"$.{key}", "a zip_override section contains an empty list; nothing to zip"
        )
    long = sorted({n for n in lengths if n != 1})
    if len(long) > 1:
        raise RecipeError.single(
            file,
            f"$.{key}",
            f"zip lists have incompatible lengths {long}; every list must have the same "
            "length, or length 1 (used for every variant)",
        )
    return long[0] if long else 1


def _name_of(base: dict[str, Any]) -> str:
    name = base.get("name")
    return name if isinstance(name, str) and name else "unnamed"


def _override_variant(doc: dict[str, Any], key: str) -> Variant:
    section = doc[key]
    suffix = key.removeprefix("override_")
    merged = deep_merge(doc["base"], section)
    if "name" not in section:
        merged["name"] = f"{_name_of(doc['base'])}_{suffix}"
    return Variant(suffix=suffix, selector=key, document=merged)


def _zip_variants(doc: dict[str, Any], key: str, file: str) -> list[Variant]:
    section = doc[key]
    group = key.removeprefix("zip_override_")
    count = _zip_count(key, section, file)
    out = []
    for i in range(count):
        sliced = _zip_slice(section, i)
        merged = deep_merge(doc["base"], sliced)
        if not isinstance(section.get("name"), list):
            merged["name"] = f"{_name_of(doc['base'])}_{group}_{i}"
        out.append(Variant(suffix=f"{group}_{i}", selector=f"{key}[{i}]", document=merged))
    return out


def _with_schema(doc: dict[str, Any], variant: Variant) -> Variant:
    if "schema" not in doc or "schema" in variant.document:
        return variant
    document = {"schema": doc["schema"], **variant.document}
    return Variant(suffix=variant.suffix, selector=variant.selector, document=document)


def expand_variants(doc: dict[str, Any], *, file: str, selector: str | None) -> list[Variant]:
    """The variants an override file yields for ``selector`` (None: every override)."""
    issues = check_layout(doc, file)
    if issues:
        raise RecipeError(issues)
    overrides = sorted(k for k in doc if k.startswith("override_"))
    zips = sorted(k for k in doc if k.startswith("zip_override_"))
    if selector is not None:
        check_selector(selector, file=file)
    chosen: list[Variant]
    if selector is None:
        chosen = [_override_variant(doc, k) for k in overrides]
        for key in zips:
            chosen.extend(_zip_variants(doc, key, file))
    elif selector == "base":
        base = copy.deepcopy(doc["base"])
        chosen = [Variant(suffix="base", selector="base", document=base)]
    elif "*" in selector or "?" in selector:
        keys = [k for k in sorted(overrides + zips) if fnmatch.fnmatchcase(k, selector)]
        if not keys:
            available = ", ".join(sorted(overrides + zips)) or "(none)"
            raise RecipeError.single(
                file, "$", f"no variants match {show_value(selector)}; available: {available}"
            )
        chosen = []
        for key in keys:
            if key in zips:
                chosen.extend(_zip_variants(doc, key, file))
            else:
                chosen.append(_override_variant(doc, key))
    else:
        chosen = _select_one(doc, selector, overrides, zips, file)
    return [_with_schema(doc, v) for v in chosen]


def _select_one(
    doc: dict[str, Any], selector: str, overrides: list[str], zips: list[str], file: str
) -> list[Variant]:
    indexed = _ZIP_INDEXED.match(selector)
    if indexed:
        key, position = indexed.group(1), int(indexed.group(2))
        if key not in zips:
            groups = ", ".join(f"{z}[i]" for z in zips) or "(none)"
            raise RecipeError.single(
                file, "$", f"{show_value(key)} not found; available zip groups: {groups}"
            )
        variants = _zip_variants(doc, key, file)
        if position >= len(variants):
            raise RecipeError.single(
                file,
                f"$.{key}",
                f"index [{position}] is out of range for {show_value(key)} "
                f"(it has {len(variants)} variants, valid: 0-{len(variants) - 1})",
            )
        return [variants[position]]
    if selector.startswith("zip_override_"):
        if selector not in zips:
            raise RecipeError.single(
                file,
                "$",
                f"{show_value(selector)} not found; available zip groups: "
                f"{', '.join(zips) or '(none)'}",
            )
        return _zip_variants(doc, selector, file)
    if selector not in overrides:
        available = ", ".join(overrides + [f"{z}[i]" for z in zips]) or "(none)"
        raise RecipeError.single(
            file, "$", f"override {show_value(selector)} not found; available: {available}"
        )
    return [_override_variant(doc, selector)]
