"""Comment-keeping YAML for ``resolve-override``: each variant is written as the ``base:`` section
(with its comments and key order) brought in line with the variant's resolved value.

Keys the variant does not have are removed, changed values replaced, new keys appended, and
``schema`` inserted first when the variant has it and the base does not
(docs/recipes.md#resolve-override).
"""

from __future__ import annotations

import copy
import io
from typing import Any

__all__ = ["dump_roundtrip", "load_roundtrip", "synced"]


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 100
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def load_roundtrip(text: str) -> Any:
    return _yaml().load(text)


def dump_roundtrip(node: Any) -> str:
    out = io.StringIO()
    _yaml().dump(node, out)
    return out.getvalue()


def _sync(node: Any, value: dict[str, Any]) -> None:
    from ruamel.yaml.comments import CommentedMap

    for key in [k for k in node if k not in value]:
        del node[key]
    for position, (key, item) in enumerate(value.items()):
        if key in node:
            current = node[key]
            if isinstance(item, dict) and isinstance(current, CommentedMap):
                _sync(current, item)
            elif current != item or isinstance(current, bool) != isinstance(item, bool):
                node[key] = item
        elif position == 0:
            node.insert(0, key, item)
        else:
            node[key] = item


def synced(base: Any, value: dict[str, Any]) -> Any:
    """A copy of the round-trip mapping ``base`` whose content equals ``value``."""
    node = copy.deepcopy(base)
    _sync(node, value)
    return node
