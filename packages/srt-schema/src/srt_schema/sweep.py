"""``sweep:`` grid expansion: one job per combination, ``{placeholder}`` substitution, job names.

docs/recipes.md#sweeps. A string that is exactly ``"{key}"`` becomes the value with its YAML type,
then takes the type its field accepts (``concurrencies: "{c}"`` with ``c: [4, 8]`` is ``[4]``, then
``[8]``: see ``structural.coerce_at``); any other string gets ``str(value)`` (lists comma-joined)
in place of each known ``{key}``. A string that is exactly ``"{name}"`` with no ``name`` in
``sweep:`` is an error (a misspelt placeholder would otherwise reach its field as text).
"""

from __future__ import annotations

import copy
import itertools
import re
from typing import Any

import msgspec

from srt_schema.errors import Issue, RecipeError
from srt_schema.schemas import load_schema
from srt_schema.structural import coerce_at

__all__ = ["SweepPoint", "expand_sweep", "has_sweep"]


class SweepPoint(msgspec.Struct, frozen=True, kw_only=True):
    """One combination: its parameters (in sweep order) and the substituted document."""

    params: dict[str, Any]
    document: dict[str, Any]


def has_sweep(doc: dict[str, Any]) -> bool:
    return "sweep" in doc


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _name_part(value: Any) -> str:
    """A sweep value as part of a job name: ``str(value)`` (the reference's spelling) with every
    run of characters that are not safe in a file name made one ``-`` (``[4, 8]`` -> ``4-8``)."""
    text = "-".join(map(str, value)) if isinstance(value, list) else str(value)
    return _UNSAFE.sub("-", text).strip("-")


def _text(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(_text(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


Path = tuple[str | int, ...]

#: A string that is one placeholder and nothing else: ``"{conc}"``.
_WHOLE_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_-]*)\}")


def _dollar_path(path: Path) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def _undefined(node: Any, keys: list[str], path: Path, file: str) -> list[Issue]:
    """Whole-string ``"{name}"`` placeholders whose name is not a sweep parameter."""
    if isinstance(node, dict):
        return [i for k, v in node.items() for i in _undefined(v, keys, (*path, k), file)]
    if isinstance(node, list):
        return [i for n, v in enumerate(node) for i in _undefined(v, keys, (*path, n), file)]
    if isinstance(node, str) and (m := _WHOLE_PLACEHOLDER.fullmatch(node)) and m[1] not in keys:
        known = ", ".join(keys)
        return [
            Issue(
                file=file,
                path=_dollar_path(path),
                message=f"placeholder {node!r}: {m[1]!r} is not in sweep: (it has {known})",
            )
        ]
    return []


def _substitute(node: Any, params: dict[str, Any], path: Path, whole: list[Path]) -> Any:
    if isinstance(node, dict):
        return {k: _substitute(v, params, (*path, k), whole) for k, v in node.items()}
    if isinstance(node, list):
        return [_substitute(v, params, (*path, i), whole) for i, v in enumerate(node)]
    if isinstance(node, str):
        for key, value in params.items():
            if node == "{" + key + "}":
                whole.append(path)
                return copy.deepcopy(value)
        out = node
        for key, value in params.items():
            out = out.replace("{" + key + "}", _text(value))
        return out
    return node


def _typed(job: dict[str, Any], whole: list[Path]) -> dict[str, Any]:
    """Each whole-value substitution in the type its recipe field accepts (structural.coerce_at)."""
    schema = load_schema("recipe")
    root: dict[str, Any] = schema["$defs"]["Recipe"]
    for path in whole:
        value = coerce_at(schema, root, job, path)
        parent: Any = job
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = value
    return job


def expand_sweep(doc: dict[str, Any], *, file: str) -> list[SweepPoint]:
    """Every combination of the ``sweep`` block, in declaration order (Cartesian product)."""
    sweep = doc.get("sweep")
    issues: list[Issue] = []
    if not isinstance(sweep, dict) or not sweep:
        raise RecipeError.single(
            file, "$.sweep", "must be a mapping of parameter name to a list of values"
        )
    for key, values in sweep.items():
        if not isinstance(values, list) or not values:
            issues.append(
                Issue(
                    file=file,
                    path=f"$.sweep.{key}",
                    message=f"must be a non-empty list of values, got {values!r}",
                )
            )
    if issues:
        raise RecipeError(issues)
    body = {k: v for k, v in doc.items() if k != "sweep"}
    undefined = _undefined(body, list(sweep), (), file)
    if undefined:
        raise RecipeError(undefined)
    name = body.get("name")
    base_name = name if isinstance(name, str) else "unnamed"
    points = []
    keys = list(sweep)
    for combo in itertools.product(*(sweep[k] for k in keys)):
        params = dict(zip(keys, combo, strict=True))
        whole: list[Path] = []
        job = _typed(_substitute(body, params, (), whole), whole)
        job["name"] = base_name + "".join(
            f"_{_name_part(k)}{_name_part(v)}" for k, v in params.items()
        )
        points.append(SweepPoint(params=params, document=job))
    return points
