"""Environment layering and ``{node}`` / ``{node_id}`` templating
(docs/planner.md#worker-environment).

Layers are merged lowest first; a later layer wins key by key. Only the placeholders a layer
documents are replaced; any other ``{...}`` stays literally (shell and JSON values survive).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["layer_env", "render_placeholders", "template_node_env"]


def render_placeholders(text: str, values: Mapping[str, str]) -> str:
    """Replace ``{name}`` for each known ``name``; unknown placeholders are kept."""
    for name, value in values.items():
        text = text.replace("{" + name + "}", value)
    return text


def template_node_env(env: Mapping[str, str], node: str, node_id: int) -> dict[str, str]:
    """Role env and recipe ``environment`` values with ``{node}`` and ``{node_id}`` filled in."""
    values = {"node": node, "node_id": str(node_id)}
    return {key: render_placeholders(value, values) for key, value in env.items()}


def layer_env(*layers: Mapping[str, str]) -> dict[str, str]:
    """Merge layers lowest-precedence first; the result keeps first-insertion order."""
    merged: dict[str, str] = {}
    for layer in layers:
        merged.update(layer)
    return merged
