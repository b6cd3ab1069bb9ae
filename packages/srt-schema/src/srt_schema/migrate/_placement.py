"""Frontend and benchmark placement booleans -> ``placement.node`` (docs/recipes.md#migration rules
2 and 3).

``dedicated_node: true`` next to a location other than ``head`` is a contradiction and refused
(the reference silently let the dedicated node win).

Also renames the schema-1 ``frontend.type: sglang`` (the SGLang Model Gateway router) to its
schema-2 name ``sglang-router``; in schema 2, ``sglang`` is the router-free single worker.
"""

from __future__ import annotations

from typing import Any

from srt_schema.migrate._context import Variant, scalar
from srt_schema.migrate._yaml import (
    Moved,
    is_flow,
    new_map,
    new_seq,
    pop_key,
    put_key,
    replace_scalar,
)

__all__ = ["fold_placement", "rename_sglang_frontend", "rename_v1_layout_sglang_frontend"]

# (block, location key, dedicated key)
_LEGACY: tuple[tuple[str, str, str], ...] = (
    ("frontend", "orchestrator_placement", "dedicated_node"),
    ("benchmark", "client_placement", "client_dedicated_node"),
)


def rename_sglang_frontend(v: Variant) -> None:
    frontend = v.doc.get("frontend")
    if not isinstance(frontend, dict) or "type" not in frontend:
        return
    current = frontend["type"]
    if current == "sglang":
        replace_scalar(frontend, "type", "sglang-router")
    elif isinstance(current, list) and "sglang" in current:
        frontend["type"] = new_seq(
            ["sglang-router" if item == "sglang" else item for item in current],
            flow=is_flow(current),
        )
    else:
        return
    v.note("frontend.type: sglang -> sglang-router (the router)")


def _needs_router(v: Variant) -> bool:
    """Whether the direct ``sglang`` frontend (one aggregate worker) cannot serve this layout."""
    if v.role_exists("prefill") or v.role_exists("decode"):
        return True
    roles = v.doc.get("roles")
    agg = roles.get("agg") if isinstance(roles, dict) else None
    workers = scalar(agg.get("workers")) if isinstance(agg, dict) else None
    if workers is None and v.is_override and v.base_v2 is not None:
        base_roles = v.base_v2.get("roles")
        base_agg = base_roles.get("agg") if isinstance(base_roles, dict) else None
        workers = scalar(base_agg.get("workers")) if isinstance(base_agg, dict) else None
    return isinstance(workers, int) and not isinstance(workers, bool) and workers > 1


def rename_v1_layout_sglang_frontend(v: Variant) -> None:
    """A ``schema: 2`` file still written in the v1 layout meant the router by ``sglang`` too.

    Only renamed when the direct frontend could not serve the layout (several workers or P/D),
    so a file that may already mean the direct frontend is left alone. Runs after the roles fold.
    """
    frontend = v.doc.get("frontend")
    if not isinstance(frontend, dict) or frontend.get("type") != "sglang" or not _needs_router(v):
        return
    replace_scalar(frontend, "type", "sglang-router")
    v.note(
        "frontend.type: sglang -> sglang-router (the file uses the v1 layout, where sglang "
        "named the router; the direct sglang frontend serves a single aggregate worker)"
    )


def fold_placement(v: Variant) -> None:
    for block_name, where_key, dedicated_key in _LEGACY:
        block = v.doc.get(block_name)
        if not isinstance(block, dict):
            continue
        present = [key for key in (where_key, dedicated_key) if key in block]
        if not present:
            continue
        where_v1, dedicated_v1 = scalar(block.get(where_key)), scalar(block.get(dedicated_key))
        if dedicated_v1 is True and where_v1 not in (None, "head"):
            v.refuse(
                f"{block_name}.{dedicated_key}",
                f"{block_name}.{dedicated_key}: true asks for a node of its own, but "
                f"{block_name}.{where_key} asks for {where_v1}; keep one: delete "
                f"{where_key} (placement.node: dedicated) or delete {dedicated_key} "
                f"(placement.node: {where_v1})",
            )
            continue
        index = list(block.keys()).index(present[0])
        moves: dict[str, Moved] = {key: pop_key(block, key) for key in present}
        where = moves[where_key].value if where_key in moves else None
        dedicated = moves[dedicated_key].value if dedicated_key in moves else None
        node: Any = "dedicated" if dedicated is True else (where if where is not None else "head")
        legacy = " / ".join(f"{block_name}.{key}" for key in present)
        placement = block.get("placement")
        if isinstance(placement, dict) and "node" in placement:
            v.note(f"{block_name}.placement.node already set; kept it and dropped legacy {legacy}")
            continue
        if not isinstance(placement, dict):
            placement = new_map()
            put_key(block, "placement", placement, index=index, moved=moves[present[0]])
        placement["node"] = node
        v.note(f"{legacy} -> {block_name}.placement.node: {node}")
