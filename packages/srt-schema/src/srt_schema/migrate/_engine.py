"""What is left of ``backend:`` -> top-level ``engine:`` (docs/recipes.md#migration rule 3, engine).

Runs after the role, Mooncake and placement rules took their keys out of ``backend``. Also moves
``backend.kv_events_config`` and ``dynamo.sidecar`` onto the roles.
"""

from __future__ import annotations

from typing import Any

from srt_schema.migrate._context import Variant, scalar
from srt_schema.migrate._roles import ROLE_MODES, engine_config_key
from srt_schema.migrate._yaml import Moved, is_map, new_map, pop_key, put_key

__all__ = ["fold_engine", "fold_sidecar"]

_ROLE_OF_MODE = {mode: role for role, mode in ROLE_MODES}


def _engine_type(v: Variant) -> str:
    explicit = v.effective("backend", "type")
    if isinstance(explicit, str) and explicit:
        return explicit
    return engine_config_key(v).removesuffix("_config")


def _base_engine_is_map(v: Variant) -> bool:
    return v.is_override and v.base_v2 is not None and isinstance(v.base_v2.get("engine"), dict)


def _set_role_field(v: Variant, role: str, field: str, value: Any) -> bool:
    if not v.role_exists(role):
        return False
    roles = v.child_map(v.doc, "roles")
    target = v.child_map(roles, role)
    if field in target:
        v.note(f"roles.{role}.{field} already set; kept it")
        return True
    target[field] = value
    return True


def _fold_kv_events(v: Variant, backend: Any) -> None:
    if "kv_events_config" not in backend:
        return
    config = pop_key(backend, "kv_events_config").value
    if isinstance(config, dict):
        for mode, value in config.items():
            role = _ROLE_OF_MODE.get(str(mode), str(mode))
            if _set_role_field(v, role, "kv_events", value):
                v.note(f"backend.kv_events_config.{mode} -> roles.{role}.kv_events")
            else:
                v.note(f"dropped backend.kv_events_config.{mode} (no {role} role)")
        return
    if config is True:
        targets = ["prefill", "decode"] + (["agg"] if _engine_type(v) == "sglang" else [])
        done = [role for role in targets if _set_role_field(v, role, "kv_events", True)]
        if done:
            v.note(f"backend.kv_events_config: true -> roles.{{{','.join(done)}}}.kv_events: true")
        else:
            v.note("dropped backend.kv_events_config: true (no role of this engine takes it)")
        return
    v.note(f"dropped backend.kv_events_config: {config!r} (the default)")


def fold_engine(v: Variant) -> None:
    if "backend" not in v.doc:
        return
    index = list(v.doc.keys()).index("backend")
    backend = v.doc["backend"]
    if isinstance(backend, dict):
        _fold_kv_events(v, backend)
    moved: Moved = pop_key(v.doc, "backend")
    engine = _engine_value(v, moved.value)
    if engine is _DROP:
        v.note("dropped the empty backend block (the base's engine applies)")
        return
    put_key(v.doc, "engine", engine, index=index, moved=moved, indent=v.column(0))
    if is_map(engine):
        shown = (
            "{" + ", ".join(f"{k}: {engine[k]}" if k == "type" else str(k) for k in engine) + "}"
        )
    else:
        shown = _show(engine)
    v.note(f"backend -> engine: {shown}")


def _show(value: Any) -> str:
    """A value as YAML flow text, for notes."""
    if value is None:
        return "null"
    if isinstance(value, list):
        return "[" + ", ".join(_show(item) for item in value) + "]"
    return str(value)


_DROP = object()


def _engine_value(v: Variant, backend: Any) -> Any:
    if not is_map(backend):
        return backend
    knobs = [key for key in backend if key != "type"]
    engine_type = backend.get("type")
    if not knobs:
        if engine_type is None:
            if v.is_override:
                return _DROP
            implicit = _engine_type(v)
            v.note(f"engine: {implicit} (was the implicit default)")
            return implicit
        if isinstance(engine_type, list) or not _base_engine_is_map(v):
            return engine_type
        return new_map({"type": engine_type})
    if "type" in backend:
        if next(iter(backend)) != "type":
            value = backend.pop("type")
            backend.insert(0, "type", value)
        return backend
    base_engine = v.base_v2.get("engine") if v.is_override and v.base_v2 is not None else None
    if isinstance(base_engine, str):
        backend.insert(0, "type", base_engine)
        v.note(f"engine.type: {base_engine} (from the base; a mapping replaces the base's string)")
    elif not v.is_override:
        implicit = _engine_type(v)
        if implicit != "sglang":
            backend.insert(0, "type", implicit)
            v.note(f"engine.type: {implicit} (implied by backend.{implicit}_config)")
    return backend


def fold_sidecar(v: Variant) -> None:
    dynamo = v.doc.get("dynamo")
    if not isinstance(dynamo, dict) or scalar(dynamo.get("sidecar")) is not True:
        return
    done = [role for role, _ in ROLE_MODES if _set_role_field(v, role, "sidecar", True)]
    if not done:
        return
    pop_key(dynamo, "sidecar")
    v.note(f"dynamo.sidecar: true -> roles.{{{','.join(done)}}}.sidecar: true")
