"""YAML in and out: a safe loader that refuses duplicate keys, and a stable dumper.

Pure: text in, Python values out. Errors are RecipeErrors naming the file and the line.
"""

from __future__ import annotations

from typing import Any

import yaml

from srt_schema.errors import RecipeError

__all__ = ["dump_yaml", "parse_yaml"]


# libyaml's parser when PyYAML was built with it (the wheels are), else the pure-Python one.
_SafeBase: type[yaml.SafeLoader] = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader  # type: ignore[assignment]


class _StrictLoader(_SafeBase):  # type: ignore[valid-type,misc]
    """A safe loader that refuses a mapping with the same key twice."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    loader.flatten_mapping(node)
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        line = key_node.start_mark.line + 1
        try:
            first = seen.get(key)
        except TypeError:  # unhashable key: let the base constructor report it
            continue
        if first is not None:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"duplicate key {key!r} (first on line {first}, again on line {line}); "
                "keep one of them",
                key_node.start_mark,
            )
        seen[key] = line
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _construct_mapping,
)


def parse_yaml(text: str, *, file: str) -> Any:
    """Parse one YAML document; an empty document is an error."""
    try:
        value = yaml.load(text, Loader=_StrictLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown position"
        problem = exc.problem or str(exc)
        raise RecipeError.single(file, "$", f"invalid YAML at {where}: {problem}") from exc
    except yaml.YAMLError as exc:
        raise RecipeError.single(file, "$", f"invalid YAML: {exc}") from exc
    if value is None:
        raise RecipeError.single(file, "$", "the file is empty; a recipe is a YAML mapping")
    return value


class _Dumper(yaml.SafeDumper):
    """Block style, keys in insertion order, no aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(tuple, yaml.SafeDumper.represent_list)


def dump_yaml(value: Any) -> str:
    """Deterministic YAML text for a plain value (dicts keep their order)."""
    return yaml.dump(value, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=100)
