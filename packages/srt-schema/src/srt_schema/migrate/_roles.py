"""``resources.<role>_*`` and ``backend.<mode>_*`` -> ``roles.<role>.*`` (docs/recipes.md#migration
rule 3, roles).

Also turns ``resources.decode_nodes: 0`` into ``roles.decode.nodes: colocate`` and, when the
numbers are known, writes the per-worker GPU counts that colocation requires.
"""

from __future__ import annotations

from typing import Any

from srt_schema.migrate._context import Variant, scalar
from srt_schema.migrate._yaml import (
    is_flow,
    new_seq,
    pop_key,
    put_key,
    replace_scalar,
    set_above,
    shift_comments,
)

__all__ = ["ROLE_MODES", "engine_config_key", "fold_roles"]

# (role in schema 2, mode in v1 backend keys)
ROLE_MODES: tuple[tuple[str, str], ...] = (
    ("prefill", "prefill"),
    ("decode", "decode"),
    ("agg", "aggregated"),
)
ENGINE_CONFIG_KEYS = (
    "sglang_config",
    "vllm_config",
    "trtllm_config",
    "mocker_config",
    "atom_config",
    "tilert_config",
)


def engine_config_key(v: Variant) -> str:
    """Which ``backend.<engine>_config`` holds the per-mode engine flags."""
    engine = v.effective("backend", "type")
    if isinstance(engine, str) and engine:
        return f"{engine}_config"
    for backend in (v.original("backend"), v.base_v1.get("backend")):
        if isinstance(backend, dict):
            for key in backend:
                if key in ENGINE_CONFIG_KEYS:
                    return str(key)
    return "sglang_config"


def _legacy_sources(
    v: Variant, role: str, mode: str, config_key: str
) -> list[tuple[Any, str, str]]:
    """(container, legacy key, role field) for every legacy key of one role, in output order."""
    sources: list[tuple[Any, str, str]] = []
    resources = v.doc.get("resources")
    backend = v.doc.get("backend")
    if isinstance(resources, dict):
        for legacy, field in (
            (f"{role}_nodes", "nodes"),
            (f"{role}_workers", "workers"),
            (f"gpus_per_{role}", "gpus"),
            (f"{role}_critical", "critical"),
        ):
            if legacy in resources:
                sources.append((resources, legacy, field))
    if isinstance(backend, dict):
        for legacy, field in ((f"{mode}_environment", "env"), (f"{mode}_extra_args", "extra_args")):
            if legacy in backend:
                sources.append((backend, legacy, field))
        config = backend.get(config_key)
        if isinstance(config, dict) and mode in config:
            sources.append((config, mode, "args"))
    return sources


def _legacy_name(container: Any, v: Variant, key: str, config_key: str) -> str:
    if container is v.doc.get("resources"):
        return f"resources.{key}"
    if container is v.doc.get("backend"):
        return f"backend.{key}"
    return f"backend.{config_key}.{key}"


def _roles_index(doc: Any) -> int:
    keys = list(doc.keys())
    for anchor in ("backend", "resources"):
        if anchor in keys:
            return keys.index(anchor) + 1
    return len(keys)


def fold_roles(v: Variant) -> None:
    config_key = engine_config_key(v)
    for role, mode in ROLE_MODES:
        sources = _legacy_sources(v, role, mode, config_key)
        if not sources:
            continue
        roles = v.child_map(v.doc, "roles", index=_roles_index(v.doc))
        resources, backend = v.doc.get("resources"), v.doc.get("backend")
        target = v.child_map(roles, role)
        for container, legacy, field in sources:
            legacy_name = _legacy_name(container, v, legacy, config_key)
            moved = pop_key(container, legacy)
            if field in target:
                v.note(
                    f"roles.{role}.{field} already set; kept it and dropped legacy {legacy_name}"
                )
                continue
            if container is resources or container is backend:
                shift_comments(moved.value, v.indent)  # one level deeper: roles.<role>.<field>
            put_key(target, field, moved.value, moved=moved, indent=v.column(2))
        v.note(f"folded {role} fields into roles.{role}")
    backend = v.doc.get("backend")
    if isinstance(backend, dict):
        config = backend.get(config_key)
        if isinstance(config, dict) and not config:
            above = pop_key(backend, config_key).above
            _carry_comment(v, [line for line in above if line])
    _colocate(v)


def _carry_comment(v: Variant, lines: list[str]) -> None:
    """The comment above a removed ``<engine>_config`` goes above the first role's ``args``."""
    roles = v.doc.get("roles")
    if not lines or not isinstance(roles, dict):
        return
    for role in roles.values():
        if isinstance(role, dict) and "args" in role:
            set_above(role, "args", lines, v.column(2))
            return


def _is_zero(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value == 0


def _colocate(v: Variant) -> None:
    roles = v.doc.get("roles")
    decode = roles.get("decode") if isinstance(roles, dict) else None
    if not isinstance(decode, dict) or "nodes" not in decode:
        return
    nodes = decode["nodes"]
    if isinstance(nodes, list):
        if not any(_is_zero(item) for item in nodes):
            return
        decode["nodes"] = new_seq(
            ["colocate" if _is_zero(item) else item for item in nodes],
            flow=is_flow(nodes),
        )
    elif _is_zero(nodes):
        replace_scalar(decode, "nodes", "colocate")
    else:
        return
    v.note("roles.decode.nodes: 0 -> colocate (decode shares the prefill nodes)")
    _materialize_gpus(v, roles)


def _role_value(v: Variant, roles: Any, role: str, field: str, legacy: str) -> Any:
    target = roles.get(role)
    if isinstance(target, dict) and field in target:
        return scalar(target[field])
    return v.effective("resources", legacy)


def _materialize_gpus(v: Variant, roles: Any) -> None:
    prefill_gpus = _role_value(v, roles, "prefill", "gpus", "gpus_per_prefill")
    decode_gpus = _role_value(v, roles, "decode", "gpus", "gpus_per_decode")
    if prefill_gpus is not None and decode_gpus is not None:
        return
    if prefill_gpus is None:
        nodes = _role_value(v, roles, "prefill", "nodes", "prefill_nodes")
        workers = _role_value(v, roles, "prefill", "workers", "prefill_workers")
        per_node = v.effective("resources", "gpus_per_node")
        if not all(_is_count(x) for x in (nodes, workers, per_node)) or workers == 0:
            v.note(
                "roles.decode.nodes: colocate needs explicit GPUs per worker; "
                "set roles.prefill.gpus and roles.decode.gpus by hand"
            )
            return
        prefill_gpus = nodes * per_node // workers
        prefill = v.child_map(roles, "prefill")
        keys = list(prefill.keys())
        index = keys.index("workers") + 1 if "workers" in keys else len(keys)
        put_key(prefill, "gpus", prefill_gpus, index=index)
        v.note(
            f"materialized roles.prefill.gpus: {prefill_gpus} "
            f"(prefill nodes {nodes} x gpus_per_node {per_node} // workers {workers})"
        )
    if decode_gpus is None:
        decode = v.child_map(roles, "decode")
        keys = list(decode.keys())
        index = keys.index("workers") + 1 if "workers" in keys else len(keys)
        put_key(decode, "gpus", prefill_gpus, index=index)
        v.note(f"materialized roles.decode.gpus: {prefill_gpus} (same as roles.prefill.gpus)")


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
