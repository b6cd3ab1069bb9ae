"""Slurm hostlist expressions: ``node-[01-02,07]`` <-> ``("node-01", "node-02", "node-07")``."""

from __future__ import annotations

import re

from srt_planner.errors import HostlistError

__all__ = ["compress_hostlist", "expand_hostlist"]

_TRAILING_NUMBER = re.compile(r"^(.*?)(\d+)$")


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside brackets."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth < 0:
                raise HostlistError(f"hostlist {text!r}: unbalanced ']'")
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    if depth != 0:
        raise HostlistError(f"hostlist {text!r}: unbalanced '['")
    parts.append("".join(current))
    return [part for part in parts if part]


def _expand_range(expr: str, whole: str) -> list[str]:
    values: list[str] = []
    for item in expr.split(","):
        if "-" in item:
            low, _, high = item.partition("-")
            if not (low.isdigit() and high.isdigit()) or int(high) < int(low):
                raise HostlistError(f"hostlist {whole!r}: bad range {item!r}; write e.g. [01-08]")
            width = len(low)
            values.extend(str(n).zfill(width) for n in range(int(low), int(high) + 1))
        elif item.isdigit():
            values.append(item)
        else:
            raise HostlistError(f"hostlist {whole!r}: bad range item {item!r}; use digits")
    return values


def _expand_one(pattern: str, whole: str) -> list[str]:
    start = pattern.find("[")
    if start < 0:
        return [pattern]
    end = pattern.find("]", start)
    if end < 0:
        raise HostlistError(f"hostlist {whole!r}: unbalanced '['")
    prefix, body, rest = pattern[:start], pattern[start + 1 : end], pattern[end + 1 :]
    tails = _expand_one(rest, whole)
    return [prefix + value + tail for value in _expand_range(body, whole) for tail in tails]


def expand_hostlist(text: str) -> tuple[str, ...]:
    """Expand a Slurm hostlist expression into node names, in order."""
    text = text.strip()
    if not text:
        raise HostlistError("hostlist is empty; expected e.g. 'node-[01-04]'")
    names: list[str] = []
    for part in _split_top_level(text):
        names.extend(_expand_one(part, text))
    return tuple(names)


def compress_hostlist(names: tuple[str, ...] | list[str]) -> str:
    """Compress node names into a hostlist expression, keeping their order.

    Consecutive names sharing a prefix and a number width collapse into one bracket;
    ``expand_hostlist(compress_hostlist(x)) == tuple(x)`` for any list of names.
    """
    groups: list[tuple[str, int, list[int]] | str] = []
    for name in names:
        match = _TRAILING_NUMBER.match(name)
        if match is None:
            groups.append(name)
            continue
        prefix, digits = match.group(1), match.group(2)
        width, number = len(digits), int(digits)
        last = groups[-1] if groups else None
        if (
            isinstance(last, tuple)
            and last[0] == prefix
            and last[1] == width
            and number == last[2][-1] + 1
            and "[" not in prefix
            and "," not in prefix
        ):
            last[2].append(number)
        else:
            groups.append((prefix, width, [number]))
    rendered: list[str] = []
    for group in groups:
        if isinstance(group, str):
            rendered.append(group)
            continue
        prefix, width, numbers = group
        if len(numbers) == 1:
            rendered.append(f"{prefix}{str(numbers[0]).zfill(width)}")
        else:
            low, high = str(numbers[0]).zfill(width), str(numbers[-1]).zfill(width)
            rendered.append(f"{prefix}[{low}-{high}]")
    return ",".join(rendered)
