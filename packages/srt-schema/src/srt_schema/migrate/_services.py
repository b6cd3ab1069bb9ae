"""``infra:`` -> etcd / nats ``services:`` entries (docs/recipes.md#migration rule 3, infra), plus
the shared helper that adds service entries to a variant (also used for the Mooncake master).

``services`` is a list, and override variants *replace* lists: a variant that adds a service
therefore carries the base's full (migrated) list with its own entries merged in by name.
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

from srt_schema.migrate._context import Variant, scalar
from srt_schema.migrate._yaml import Moved, new_map, pop_key, put_key

__all__ = ["add_services", "fold_infra"]


def _service(name: str, node: str | None = None, options: dict[str, Any] | None = None) -> Any:
    entry = new_map({"name": name, "type": name})
    if node is not None:
        entry["placement"] = new_map({"node": node})
    if options:
        entry["options"] = new_map(options)
    return entry


def add_services(v: Variant, entries: list[Any], *, index: int, moved: Moved | None) -> None:
    """Merge ``entries`` by ``name`` into the variant's ``services`` list (created if absent)."""
    existing = v.doc.get("services")
    if v.is_zip and isinstance(existing, list) and len(existing) == 1:
        target = existing[0] if isinstance(existing[0], list) else None
    else:
        target = existing if isinstance(existing, list) else None
    if target is None:
        inherited: list[Any] = []
        if v.is_override and v.base_v2 is not None:
            base_services = v.base_v2.get("services")
            if isinstance(base_services, list):
                inherited = [deepcopy(item) for item in base_services]
        wrapped = v.literal_list(inherited)
        put_key(v.doc, "services", wrapped, index=index, moved=moved, indent=v.column(0))
        target = wrapped[0] if v.is_zip else wrapped
    for entry in entries:
        names = [item.get("name") if isinstance(item, dict) else None for item in target]
        if entry["name"] in names:
            target[names.index(entry["name"])] = entry
        else:
            target.append(entry)


def _nats_wanted(v: Variant, payload: Any) -> bool:
    planes = (v.effective("dynamo", "request_plane"), v.effective("dynamo", "event_plane"))
    return "nats" in planes or payload is not None


def fold_infra(v: Variant) -> None:
    if "infra" not in v.doc:
        return
    index = list(v.doc.keys()).index("infra")
    moved = pop_key(v.doc, "infra")
    infra = moved.value
    frontend = v.effective("frontend", "type") or "dynamo"
    dedicated: Any = None
    payload: Any = None
    if isinstance(infra, dict):
        dedicated = scalar(infra.get("etcd_nats_dedicated_node"))
        payload = infra.get("nats_max_payload_mb")
        placement = infra.get("placement")
        if dedicated is None and isinstance(placement, dict) and placement.get("node") is not None:
            dedicated = placement["node"] == "dedicated"
    elif infra is None and v.is_override:
        dedicated = False  # `infra: null` undoes the base's infra block
    if frontend != "dynamo":
        if payload is not None:
            v.note(f"dropped infra.nats_max_payload_mb (frontend.type {frontend} starts no NATS)")
        if dedicated is True:
            v.note(
                f"dropped infra.etcd_nats_dedicated_node: true (frontend.type {frontend} starts "
                "no etcd/NATS, so no node is reserved now; use frontend.placement.node or "
                "benchmark.placement.node: dedicated to isolate a process)"
            )
        elif infra is not None:
            v.note("dropped infra (the default)")
        return
    nats = _nats_wanted(v, payload)
    entries: list[Any] = []
    if dedicated is True:
        entries = [_service("etcd", "dedicated")]
        if nats:
            entries.append(_service("nats", "dedicated"))
    elif dedicated is False and v.is_override:
        entries = [_service("etcd", "infra")]
        if nats:
            entries.append(_service("nats", "infra"))
    if payload is not None:
        nats_entry = next((e for e in entries if e["name"] == "nats"), None)
        if nats_entry is None:
            nats_entry = _service("nats")
            entries.append(nats_entry)
        nats_entry["options"] = new_map({"max_payload_mb": payload})
    if not entries:
        v.note("dropped infra.etcd_nats_dedicated_node: false (the default)")
        return
    add_services(v, entries, index=index, moved=moved)
    names = ", ".join(str(e["name"]) for e in entries)
    v.note(f"infra -> services: {names}")
