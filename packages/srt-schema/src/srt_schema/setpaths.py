"""``--set KEY=VALUE`` and ``--unset KEY`` on a raw recipe document (docs/recipes.md#set-and-unset).

Paths: ``a.b.c``, ``a.b[2].c``, and quoted segments that may hold dots (``mounts."/a/b.c"``).
Values are YAML-typed (``720`` is an int, ``"720"`` a string, ``[4, 8]`` a list); a value that
parses to a mapping stays the literal string, so engine flags can take JSON.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import msgspec

from srt_schema.errors import RecipeError, SchemaError
from srt_schema.structural import join_path
from srt_schema.yamlio import YAML_LIMITS, parse_yaml_value

__all__ = [
    "OverrideSyntaxError",
    "PathOverride",
    "apply_overrides",
    "parse_path",
    "parse_set",
    "parse_unset",
]

Segment = str | int


class OverrideSyntaxError(SchemaError):
    """A ``--set``/``--unset`` argument that does not parse (a usage error)."""


class PathOverride(msgspec.Struct, frozen=True, kw_only=True):
    """One ``--set`` (``unset=False``) or ``--unset`` (``unset=True``)."""

    path: tuple[Segment, ...]
    text: str
    value: Any = None
    unset: bool = False

    def render(self) -> str:
        if self.unset:
            return f"--unset {self.text}"
        return f"--set {self.text}={_render_value(self.value)}"


def _render_value(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value)


#: A ``--set``/``--unset`` path: at most this many characters, and at most as many segments as a
#: document may nest levels (``YAML_LIMITS["depth"]``).
MAX_PATH_CHARS = 1024


def parse_path(text: str) -> tuple[Segment, ...]:
    """``a.b[2]."c.d"`` -> ``("a", "b", 2, "c.d")``."""
    if not text:
        raise OverrideSyntaxError("empty path")
    if len(text) > MAX_PATH_CHARS:
        raise OverrideSyntaxError(
            f"{text[:60]!r}...: a path of {len(text)} characters is too long; recipe paths are at "
            f"most {MAX_PATH_CHARS} characters"
        )
    out = _segments(text)
    depth = YAML_LIMITS["depth"].maximum
    if len(out) > depth:
        raise OverrideSyntaxError(
            f"{text[:60]!r}...: a path of {len(out)} segments is deeper than any recipe "
            f"(at most {depth} levels); name a field of the recipe"
        )
    return out


def _segments(text: str) -> tuple[Segment, ...]:
    out: list[Segment] = []
    i = 0
    expect_key = True
    while i < len(text):
        ch = text[i]
        if ch == "[":
            if not out:
                raise OverrideSyntaxError(f"{text!r}: a path cannot start with [N]")
            end = text.find("]", i)
            digits = text[i + 1 : end] if end != -1 else ""
            if end == -1 or not digits.isdigit():
                raise OverrideSyntaxError(f"{text!r}: [N] needs a position made of digits")
            out.append(int(digits))
            i = end + 1
            expect_key = False
        elif ch == ".":
            if expect_key:
                raise OverrideSyntaxError(f"{text!r}: empty segment")
            i += 1
            expect_key = True
            if i == len(text):
                raise OverrideSyntaxError(f"{text!r}: trailing separator")
        elif not expect_key:
            raise OverrideSyntaxError(f"{text!r}: expected '.' or '[' after a segment")
        elif ch in "\"'":
            end = text.find(ch, i + 1)
            if end == -1:
                raise OverrideSyntaxError(f"{text!r}: unterminated quote")
            out.append(text[i + 1 : end])
            i = end + 1
            expect_key = False
        elif ch == "]":
            raise OverrideSyntaxError(f"{text!r}: ']' without a matching '['")
        else:
            j = i
            while j < len(text) and text[j] not in ".[]":
                j += 1
            out.append(text[i:j])
            i = j
            expect_key = False
    return tuple(out)


def _parse_value(raw: str, path: tuple[Segment, ...]) -> Any:
    """A ``--set`` value through the recipe loader's rules (plain data only, bounded); text
    that does not parse as YAML stays text."""
    if raw == "":
        return ""
    limit = YAML_LIMITS["document_size"].maximum
    if len(raw) > limit:
        raise OverrideSyntaxError(
            f"--set value of {len(raw)} characters is longer than a whole recipe may be "
            f"(limit document_size = {limit}); put long values in the recipe file"
        )
    where = "$"
    for seg in path:
        where = join_path(where, seg)
    try:
        value = parse_yaml_value(raw, file="--set", path=where, on_syntax_error=lambda _: raw)
    except RecipeError as exc:
        first = exc.issues[0]
        raise OverrideSyntaxError(f"--set {first.path}: {first.message}") from exc
    return raw if isinstance(value, dict) else value


def parse_set(arg: str) -> PathOverride:
    key, sep, raw = arg.partition("=")
    if not sep:
        raise OverrideSyntaxError(f"--set expects KEY=VALUE, got {arg[:200]!r}")
    path = parse_path(key)
    return PathOverride(path=path, text=key, value=_parse_value(raw, path))


def parse_unset(arg: str) -> PathOverride:
    return PathOverride(path=parse_path(arg), text=arg, unset=True)


def _set(doc: Any, override: PathOverride, value: Any) -> None:
    node = doc
    path = override.path
    for depth, seg in enumerate(path[:-1]):
        nxt = path[depth + 1]
        if isinstance(seg, int):
            if not isinstance(node, list):
                raise OverrideSyntaxError(f"{override.text}: cannot index a non-list with [{seg}]")
            if seg >= len(node):
                raise OverrideSyntaxError(
                    f"{override.text}: index [{seg}] is out of range (length {len(node)})"
                )
            node = node[seg]
            continue
        if not isinstance(node, dict):
            raise OverrideSyntaxError(
                f"{override.text}: cannot descend into a non-mapping at {seg!r}"
            )
        if seg not in node or node[seg] is None:
            node[seg] = [] if isinstance(nxt, int) else {}
        node = node[seg]
        if isinstance(nxt, str) and not isinstance(node, dict):
            raise OverrideSyntaxError(
                f"{override.text}: cannot descend into a non-mapping at {seg!r}"
            )
    last = path[-1]
    if isinstance(last, int):
        if not isinstance(node, list):
            raise OverrideSyntaxError(f"{override.text}: cannot index a non-list with [{last}]")
        if last >= len(node):
            raise OverrideSyntaxError(
                f"{override.text}: index [{last}] is out of range (length {len(node)})"
            )
        node[last] = copy.deepcopy(value)
    elif isinstance(node, dict):
        node[last] = copy.deepcopy(value)
    else:
        raise OverrideSyntaxError(f"{override.text}: cannot set a key on a non-mapping")


def _unset(doc: Any, path: tuple[Segment, ...]) -> None:
    node = doc
    for seg in path[:-1]:
        if isinstance(seg, int):
            if not isinstance(node, list) or seg >= len(node):
                return
        elif not isinstance(node, dict) or seg not in node:
            return
        node = node[seg]
    last = path[-1]
    if isinstance(last, int):
        if isinstance(node, list) and last < len(node):
            del node[last]
    elif isinstance(node, dict):
        node.pop(last, None)


def apply_overrides(doc: dict[str, Any], overrides: tuple[PathOverride, ...]) -> dict[str, Any]:
    """A copy of ``doc`` with every ``--set`` (in order), then every ``--unset`` applied.

    On an override file a ``--set`` lands in ``base``, in every ``override_*`` section, and in
    every ``zip_override_*`` section as a one-element list; ``--unset`` removes it from all.
    """
    out = copy.deepcopy(doc)
    ordered = [o for o in overrides if not o.unset] + [o for o in overrides if o.unset]
    override_file = "base" in out
    for override in ordered:
        targets: list[tuple[Any, bool]] = []
        if override_file:
            targets.append((out.setdefault("base", {}), False))
            for key in out:
                if key.startswith("override_") and isinstance(out[key], dict):
                    targets.append((out[key], False))
                elif key.startswith("zip_override_") and isinstance(out[key], dict):
                    targets.append((out[key], True))
        else:
            targets.append((out, False))
        for target, zipped in targets:
            if override.unset:
                _unset(target, override.path)
            else:
                _set(target, override, [override.value] if zipped else override.value)
    return out
