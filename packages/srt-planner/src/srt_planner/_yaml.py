"""A small block-style YAML emitter for generated files (engine configs, ser.yaml).

srt-planner may not depend on a YAML library; the values it writes are plain data (mappings with
string keys, lists, strings, numbers, booleans, null). Keys are sorted; strings that YAML would
read as something else are double-quoted (JSON escaping is valid YAML).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["dump_yaml"]

_PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9_./@+-]*")
_SPECIAL = {"true", "false", "yes", "no", "on", "off", "null", "none", "~", "y", "n"}


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        # YAML 1.1 readers need a dot in an exponent float ("1.0e+100", not "1e+100").
        if "e" in text and "." not in text:
            text = text.replace("e", ".0e")
        return text
    text = str(value)
    if _PLAIN.fullmatch(text) and text.lower() not in _SPECIAL:
        return text
    return _quote(text)


def _printable(char: str) -> bool:
    code = ord(char)
    return (
        0x20 <= code <= 0x7E
        or 0xA0 <= code <= 0xD7FF
        or 0xE000 <= code <= 0xFFFD
        or 0x10000 <= code <= 0x10FFFF
    ) and char not in ("\u2028", "\u2029", "\ufeff")


def _quote(text: str) -> str:
    """A YAML double-quoted scalar; anything not plainly printable is escaped."""
    out = ['"']
    for char in text:
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif _printable(char):
            out.append(char)
        elif ord(char) <= 0xFFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    out.append('"')
    return "".join(out)


def _lines(value: Any, indent: int) -> list[str]:
    pad = " " * indent
    if isinstance(value, Mapping):
        if not value:
            return [pad + "{}"]
        out: list[str] = []
        for key in sorted(value, key=str):
            item = value[key]
            if (isinstance(item, Mapping) and item) or (isinstance(item, list | tuple) and item):
                out.append(f"{pad}{_scalar(str(key))}:")
                out.extend(_lines(item, indent + 2))
            else:
                out.append(f"{pad}{_scalar(str(key))}: {_inline(item)}")
        return out
    if isinstance(value, Sequence) and not isinstance(value, str):
        out = []
        for item in value:
            if (isinstance(item, Mapping) and item) or (isinstance(item, list | tuple) and item):
                nested = _lines(item, indent + 2)
                out.append(f"{pad}- {nested[0].lstrip()}")
                out.extend(nested[1:])
            else:
                out.append(f"{pad}- {_inline(item)}")
        return out
    return [pad + _scalar(value)]


def _inline(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{}"
    if isinstance(value, list | tuple):
        return "[]"
    return _scalar(value)


def dump_yaml(value: Mapping[str, Any]) -> str:
    """``value`` as block YAML text ending in a newline."""
    return "\n".join(_lines(value, 0)) + "\n"
