"""Frontend and benchmark placement booleans -> ``placement.node`` (spec §5.3 rules 2 and 3).

Also renames the schema-1 ``frontend.type: sglang`` (the SGLang Model Gateway router) to its
schema-2 name ``sglang-router``; in schema 2, ``sglang`` is the router-free single worker.
"""

from __future__ import annotations

from typing import Any

from srt_schema.migrate._context import Variant
from srt_schema.migrate._yaml import (
    Moved,
    is_flow,
    new_map,
    new_seq,
    pop_key,
    put_key,
    replace_scalar,
)

__all__ = ["fold_placement", "rename_sglang_frontend"]

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


def fold_placement(v: Variant) -> None:
    for block_name, where_key, dedicated_key in _LEGACY:
        block = v.doc.get(block_name)
        if not isinstance(block, dict):
            continue
        present = [key for key in (where_key, dedicated_key) if key in block]
        if not present:
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
