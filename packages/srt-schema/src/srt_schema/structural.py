"""Structural validation of a raw document against the team's JSON Schema, collecting every issue.

msgspec stops at the first error; users want all of a file's mistakes at once. This walks the
schema (the subset it uses: ``type``, ``enum``, ``anyOf``, ``$ref``, ``properties``,
``additionalProperties``, ``required``, ``items``) and reports each problem with its ``$.path``,
the bad value and what is allowed, every number outside its range in
``registry.FIELD_BOUNDS``, and every text or list over its bound (``srt_schema.text_bounds``).
Only when it finds nothing is the value decoded with msgspec.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from srt_schema.errors import Issue
from srt_schema.registry import FIELD_BOUNDS, Bound
from srt_schema.text_bounds import free_form_issue, list_limit, text_issue

__all__ = ["check_document", "coerce_at", "describe_node", "join_path"]

_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
    "array": "a list",
    "object": "a mapping",
}


def join_path(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if key.replace("_", "a").replace("-", "a").isalnum():
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key)}]"


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _matches_type(kind: str, value: Any) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if kind == "array":
        return isinstance(value, list | tuple)
    if kind == "object":
        return isinstance(value, dict)
    raise ValueError(f"unsupported schema type {kind!r}")


class _Checker:
    def __init__(self, schema: dict[str, Any], file: str) -> None:
        self.defs: dict[str, Any] = schema.get("$defs", {})
        self.file = file
        # which $defs entry (or the top level) an object node is, for FIELD_BOUNDS
        self.names: dict[int, str] = {id(schema): "$root"}
        self.names.update((id(node), name) for name, node in self.defs.items())

    def resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            node = self.defs[node["$ref"].rsplit("/", 1)[-1]]
        return node

    def describe(self, node: dict[str, Any]) -> str:
        node = self.resolve(node)
        if "anyOf" in node:
            parts = [self.describe(o) for o in node["anyOf"]]
            return " or ".join(dict.fromkeys(parts))
        if "enum" in node:
            return "one of " + ", ".join(_show(v) for v in node["enum"])
        if node.get("type") == "object" and "properties" in node:
            return "a mapping"
        return _TYPE_NAMES.get(node.get("type", ""), "a value")

    def issue(self, path: str, message: str) -> Issue:
        return Issue(file=self.file, path=path, message=message)

    def check(
        self, node: dict[str, Any], value: Any, path: str, field: tuple[str, str] = ("", "")
    ) -> Iterator[Issue]:
        """Issues of ``value`` at ``path``; ``field`` is the (definition, key) it is the value of
        (for its text format and list limit)."""
        node = self.resolve(node)
        if "anyOf" in node:
            yield from self._any_of(node, value, path, field)
            return
        if "enum" in node:
            if value not in node["enum"] or isinstance(value, bool) != any(
                isinstance(v, bool) for v in node["enum"] if v == value
            ):
                yield self.issue(
                    path, f"{_show(value)} is not allowed; expected {self.describe(node)}"
                )
            return
        kind = node.get("type")
        if kind is None:
            yield from self._free(value, path)
            return
        if not _matches_type(kind, value):
            yield self.issue(path, f"expected {self.describe(node)}, got {_show(value)}")
            return
        if kind == "object":
            yield from self._object(node, value, path)
        elif kind == "string":
            problem = text_issue(field, value)
            if problem is not None:
                yield self.issue(path, problem)
        elif kind == "array":
            limit = list_limit(field)
            if len(value) > limit:
                yield self.issue(
                    path, f"a list of {len(value)} entries is too long; write at most {limit}"
                )
            elif "items" in node:
                # an entry of a list field takes the field's text format (endpoints)
                for i, item in enumerate(value):
                    yield from self.check(node["items"], item, join_path(path, i), field)
            else:
                yield from self._free(value, path)

    def _free(self, value: Any, path: str) -> Iterator[Issue]:
        """A value the schema does not type: still bounded (srt_schema.text_bounds)."""
        found = free_form_issue(value)
        if found is not None:
            where = path
            for key in found[0]:
                where = join_path(where, key)
            yield self.issue(where, found[1])

    def _any_of(
        self, node: dict[str, Any], value: Any, path: str, field: tuple[str, str]
    ) -> Iterator[Issue]:
        options = [self.resolve(o) for o in node["anyOf"]]
        tagged = self._tagged_option(options, value)
        if tagged is not None:
            yield from self.check(tagged, value, path, field)
            return
        tags = self._tags(options)
        if tags and isinstance(value, dict) and "type" in value:
            # A tag no option has: name every tag, not the first option's one.
            import difflib  # error path only: kept off srtctl's start-up

            close = difflib.get_close_matches(str(value["type"]), tags, n=1, cutoff=0.6)
            hint = f"; did you mean {_show(close[0])}?" if close else ""
            yield self.issue(
                join_path(path, "type"),
                f"{_show(value['type'])} is not allowed; expected one of "
                + ", ".join(_show(t) for t in tags)
                + hint,
            )
            return
        best: list[Issue] | None = None
        for option in options:
            found = list(self.check(option, value, path, field))
            if not found:
                return
            # an option of the right shape explains the problem better than a type mismatch
            if self._shape_matches(option, value) and (best is None or len(found) < len(best)):
                best = found
        if best is not None:
            yield from best
        else:
            yield self.issue(path, f"expected {self.describe(node)}, got {_show(value)}")

    def _tagged_option(self, options: list[dict[str, Any]], value: Any) -> dict[str, Any] | None:
        """In a union tagged by ``type``, the option whose tag the value names."""
        if not isinstance(value, dict) or "type" not in value:
            return None
        for option in options:
            enum = option.get("properties", {}).get("type", {}).get("enum")
            if enum is not None and len(enum) == 1 and enum[0] == value["type"]:
                return option
        return None

    @staticmethod
    def _tags(options: list[dict[str, Any]]) -> list[str]:
        """The ``type`` tags of a union tagged by ``type`` (its mapping options), else []."""
        tags = []
        for option in options:
            if option.get("type") != "object":
                continue
            enum = option.get("properties", {}).get("type", {}).get("enum")
            if enum is None or len(enum) != 1 or not isinstance(enum[0], str):
                return []
            tags.append(enum[0])
        return tags

    def _shape_matches(self, node: dict[str, Any], value: Any) -> bool:
        kind = node.get("type")
        if kind is None or "enum" in node:
            return False
        # a text of the right type explains itself too (its length or format)
        return _matches_type(kind, value) and kind in ("object", "array", "string")

    def _object(self, node: dict[str, Any], value: dict[Any, Any], path: str) -> Iterator[Issue]:
        props: dict[str, Any] = node.get("properties", {})
        extra = node.get("additionalProperties", True)
        for key in node.get("required", []):
            if key not in value:
                yield self.issue(
                    join_path(path, key),
                    f"required key is missing; add `{key}:` ({self.describe(props[key])})",
                )
        for key, item in value.items():
            if not isinstance(key, str):
                yield self.issue(path, f"keys must be strings, got {_show(key)}")
                continue
            sub = join_path(path, key)
            if key in props:
                field = (self.names.get(id(node), ""), key)
                found = list(self.check(props[key], item, sub, field))
                yield from found
                bound = FIELD_BOUNDS.get(field)
                if bound is not None and not found:
                    yield from self._in_range(bound, key, item, sub)
            elif extra is False:
                retired = RETIRED_KEYS.get((self.names.get(id(node), ""), key))
                message = _unknown_key_message(key, list(props))
                shown = f"{key}: {_show(item)} {retired}"
                yield self.issue(sub, message if retired is None else shown)
            elif isinstance(extra, dict):
                yield from self.check(extra, item, sub)
            else:
                yield from self._free(item, sub)

    def _in_range(self, bound: Bound, key: str, value: Any, path: str) -> Iterator[Issue]:
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if number and not bound.allows(value):
            yield self.issue(
                path, f"{_show(value)} is out of range; {key} must be {bound.describe()}"
            )


#: Keys the schema retired, by (schema definition, key): what to write instead. ``srtctl migrate``
#: rewrites the first three (docs/recipes.md#migration).
RETIRED_KEYS: dict[tuple[str, str], str] = {
    ("TelemetryConfig", "default_frequency"): (
        "is retired: it was a period in seconds; write collect_interval_ms in milliseconds "
        "(1.0 -> 1000), or run `srtctl migrate` on the file"
    ),
    ("TachometerConfig", "default_frequency"): (
        "is retired: it was a rate in Hz; write collect_interval_ms in milliseconds "
        "(1000 / Hz: 5.0 -> 200), or run `srtctl migrate` on the file"
    ),
    ("VLLMBackend", "set_cuda_visible_devices"): (
        "is retired: write set_visible_devices (the same switch), or run `srtctl migrate` on "
        "the file"
    ),
    ("BenchmarkConfig", "export_node_metrics"): (
        "is retired: schema 2 has no node-metrics export and srt does not write one; delete the key"
    ),
}


def _unknown_key_message(key: str, allowed: list[str]) -> str:
    import difflib  # error path only: kept off srtctl's start-up

    close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
    hint = f"did you mean `{close[0]}`? " if close else ""
    return f"unknown key `{key}`; {hint}allowed here: {', '.join(allowed)}"


def describe_node(schema: dict[str, Any], node: dict[str, Any]) -> str:
    return _Checker(schema, "").describe(node)


def check_document(
    schema: dict[str, Any], node: dict[str, Any], value: Any, *, file: str, path: str = "$"
) -> list[Issue]:
    """Every structural issue of ``value`` against ``node`` (a part of ``schema``)."""
    return list(_Checker(schema, file).check(node, value, path))


def _node_at(
    checker: _Checker, node: dict[str, Any], doc: Any, path: tuple[str | int, ...]
) -> dict[str, Any] | None:
    """The schema node that describes ``doc`` at ``path`` (None where the schema is silent)."""
    for key in path:
        node = checker.resolve(node)
        if "anyOf" in node:
            want = "object" if isinstance(doc, dict) else "array"
            options = [checker.resolve(o) for o in node["anyOf"]]
            tagged = checker._tagged_option(options, doc)
            found = tagged or next((o for o in options if o.get("type") == want), None)
            if found is None:
                return None
            node = found
        if isinstance(key, int):
            if not isinstance(doc, list) or "items" not in node:
                return None
            node, doc = node["items"], doc[key]
            continue
        if not isinstance(doc, dict):
            return None
        props: dict[str, Any] = node.get("properties", {})
        extra = node.get("additionalProperties", True)
        if key in props:
            node = props[key]
        elif isinstance(extra, dict):
            node = extra
        else:
            return None
        doc = doc[key]
    return node


def _candidates(value: Any) -> list[Any]:
    """Other spellings of a whole-value sweep substitution, in order of preference."""
    out: list[Any] = [] if isinstance(value, list) else [[value]]
    if isinstance(value, bool):
        return [*out, "true" if value else "false"]
    if isinstance(value, int | float):
        out.append(str(value))
    elif isinstance(value, str):
        text = value.strip()
        if text.lstrip("-").isdigit():
            out.append(int(text))
        elif text.replace(".", "", 1).lstrip("-").isdigit():
            out.append(float(text))
    return out


def coerce_at(
    schema: dict[str, Any], root: dict[str, Any], doc: Any, path: tuple[str | int, ...]
) -> Any:
    """The value of ``doc`` at ``path`` in the type the schema accepts there.

    Used for sweep placeholders that are a field's whole value (``concurrencies: "{c}"``): the
    sweep value is kept when the schema accepts it, else the first accepted spelling of it (a
    one-element list where a list is accepted, a number's text where only text is, a digit
    string's number). A value no spelling fits is returned unchanged for the structural check to
    report.
    """
    checker = _Checker(schema, "")
    value = doc
    for key in path:
        value = value[key]
    node = _node_at(checker, root, doc, path)
    if node is None or not list(checker.check(node, value, "$")):
        return value
    for candidate in _candidates(value):
        if not list(checker.check(node, candidate, "$")):
            return candidate
    return value
