"""``backend.mooncake_kv_store`` -> a ``mooncake-master`` service plus role env
(docs/recipes.md#migration)."""

from __future__ import annotations

from srt_schema.migrate._context import Variant
from srt_schema.migrate._roles import ROLE_MODES
from srt_schema.migrate._services import add_services
from srt_schema.migrate._yaml import new_map, new_seq, pop_key

__all__ = ["fold_mooncake"]


def fold_mooncake(v: Variant) -> None:
    backend = v.doc.get("backend")
    if not isinstance(backend, dict) or "mooncake_kv_store" not in backend:
        return
    store = backend["mooncake_kv_store"]
    if not isinstance(store, dict):
        return
    env = store.get("env")
    roles = [role for role, _ in ROLE_MODES if v.role_exists(role)]
    if env and not roles:
        v.note(
            "left backend.mooncake_kv_store in place: its env needs roles to carry it; "
            "declare roles and re-run srtctl migrate"
        )
        return
    moved = pop_key(backend, "mooncake_kv_store")
    entry = new_map({"name": "mooncake-master", "type": "mooncake-master"})
    if store.get("container") is not None:
        entry["container"] = store["container"]
    extra = store.get("master_extra_args")
    if extra is not None:
        entry["args"] = extra if isinstance(extra, list) else new_seq(str(extra).split())
    if store.get("store_config") is not None:
        entry["options"] = new_map({"store_config": store["store_config"]})
    index = list(v.doc.keys()).index("backend") + 1
    add_services(v, [entry], index=index, moved=moved)
    v.note("backend.mooncake_kv_store -> services: mooncake-master")
    if env:
        all_roles = v.child_map(v.doc, "roles")
        for role in roles:
            target_env = v.child_map(v.child_map(all_roles, role), "env")
            for key, value in env.items():
                target_env[key] = value
        v.note(f"copied mooncake_kv_store.env into roles.{{{','.join(roles)}}}.env")
