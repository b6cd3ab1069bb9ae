"""Role ``args`` mappings -> CLI flags (docs/planner.md#engine-command-lines, common rules)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["flag_value", "flags_from_args"]


def flag_value(value: Any) -> str:
    """A scalar as the engines expect it (floats keep their ``.0``; booleans lower-case)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, separators=(",", ":"), sort_keys=True)
    return str(value)


def flags_from_args(
    args: Mapping[str, Any],
    *,
    skip: Iterable[str] = (),
    sort: bool = True,
    dashes: bool = True,
    repeat_lists: bool = False,
) -> list[str]:
    """``true`` -> ``--k``; ``false``/``null`` -> omitted; lists -> ``--k a b`` (or repeated)."""
    skipped = {name.replace("_", "-") for name in skip}
    keys = sorted(args) if sort else list(args)
    out: list[str] = []
    for key in keys:
        value = args[key]
        name = key.replace("_", "-") if dashes else key
        if key.replace("_", "-") in skipped or value is None or value is False:
            continue
        flag = f"--{name}"
        if value is True:
            out.append(flag)
        elif isinstance(value, list | tuple):
            if repeat_lists:
                for item in value:
                    out += [flag, flag_value(item)]
            else:
                out += [flag, *(flag_value(item) for item in value)]
        else:
            out += [flag, flag_value(value)]
    return out
