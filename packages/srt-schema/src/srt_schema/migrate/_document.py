"""The driver: which sections a file has, which rules run on each, and in which order."""

from __future__ import annotations

import re
from typing import Any

from srt_schema.errors import MigrationError
from srt_schema.migrate._benchmark import coerce_concurrencies, prune_benchmark
from srt_schema.migrate._context import Variant
from srt_schema.migrate._dynamo import fold_dynamo_source
from srt_schema.migrate._engine import fold_engine, fold_sidecar
from srt_schema.migrate._modes import drop_null_role_keys, drop_unused_modes
from srt_schema.migrate._mooncake import fold_mooncake
from srt_schema.migrate._placement import (
    fold_placement,
    rename_sglang_frontend,
    rename_v1_layout_sglang_frontend,
)
from srt_schema.migrate._retired import fold_retired, fold_visible_devices, retired_keys
from srt_schema.migrate._roles import engine_config_key, fold_roles
from srt_schema.migrate._services import fold_infra
from srt_schema.migrate._version import CURRENT_VERSION, detect_version, v1_keys
from srt_schema.migrate._yaml import (
    dump_document,
    load_document,
    mapping_indent,
    normalize_comments,
    set_above,
    split_document_header,
    to_plain,
)

__all__ = ["ALREADY_CURRENT", "Outcome", "migrate_document"]

ALREADY_CURRENT = "already current"
_VARIANT_KEY = re.compile(r"^(zip_)?override_")


class Outcome:
    __slots__ = ("from_version", "notes", "text")

    def __init__(self, text: str, from_version: int, notes: list[str]) -> None:
        self.text = text
        self.from_version = from_version
        self.notes = notes


def _sections(document: Any) -> list[tuple[str | None, Any]]:
    if "base" not in document:
        return [(None, document)]
    sections: list[tuple[str | None, Any]] = []
    if isinstance(document["base"], dict):
        sections.append(("base", document["base"]))
    for key, value in document.items():
        if isinstance(key, str) and _VARIANT_KEY.match(key) and isinstance(value, dict):
            sections.append((key, value))
    return sections


def _migrate_section(v: Variant) -> None:
    if v.from_version == 1:
        rename_sglang_frontend(v)
    drop_null_role_keys(v)
    drop_unused_modes(v, engine_config_key(v))
    fold_roles(v)
    if v.from_version == 2 and v.had_v1_layout:
        rename_v1_layout_sglang_frontend(v)
    fold_placement(v)
    fold_infra(v)
    fold_dynamo_source(v)
    prune_benchmark(v)
    coerce_concurrencies(v)
    fold_mooncake(v)
    fold_engine(v)
    fold_visible_devices(v)
    fold_sidecar(v)
    fold_retired(v)


def migrate_document(text: str, file: str) -> Outcome:
    yaml, document = load_document(text, file)
    from_version = detect_version(document, file)
    sections = _sections(document)
    legacy = [key for _, section in sections for key in (*v1_keys(section), *retired_keys(section))]
    if from_version == CURRENT_VERSION and not legacy and document.get("schema") is not None:
        return Outcome(text, from_version, [ALREADY_CURRENT])
    indent = mapping_indent(text)
    tail = normalize_comments(document)
    notes: list[str] = []
    base_v1: dict[str, Any] | None = None
    base_v2: Any = None
    refusals: list[str] = []
    for label, section in sections:
        if label == "base":
            base_v1 = to_plain(section)
        variant = Variant(
            section,
            label=label,
            from_version=from_version,
            indent=indent,
            base_v1=base_v1 if label != "base" else None,
            base_v2=base_v2,
        )
        _migrate_section(variant)
        notes.extend(variant.notes)
        refusals.extend(variant.refusals)
        if label == "base":
            base_v2 = section
    if refusals:
        raise MigrationError(file, "; ".join(refusals))
    _set_schema(document, notes)
    out = dump_document(yaml, document)
    if tail:
        out += "".join(f"{line}\n" for line in tail)
    return Outcome(out, from_version, notes)


def _set_schema(document: Any, notes: list[str]) -> None:
    base = document.get("base")
    if isinstance(base, dict) and "schema" in base and base["schema"] != CURRENT_VERSION:
        base["schema"] = CURRENT_VERSION
    if document.get("schema") == CURRENT_VERSION:
        return
    if "schema" in document:
        document["schema"] = CURRENT_VERSION
    else:
        above_first = split_document_header(document)
        document.insert(0, "schema", CURRENT_VERSION)
        if above_first and len(document) > 1:
            set_above(document, list(document.keys())[1], above_first)
    notes.append(f"set schema: {CURRENT_VERSION}")
