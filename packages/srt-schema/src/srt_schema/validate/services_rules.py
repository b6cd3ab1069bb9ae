"""Rules for ``services`` (docs/recipes.md#services-rules)."""

from __future__ import annotations

from collections.abc import Iterator

from srt_schema.errors import Issue
from srt_schema.recipe import ServiceConfig
from srt_schema.registry import SERVICE_KINDS, SERVICE_PLACEMENTS, SERVICE_STARTS
from srt_schema.roles import connector_of
from srt_schema.validate.context import Context
from srt_schema.validate.dynamo_rules import MOVING_REFS

__all__ = ["RULES"]

_PER_WORKER_NODES = ("prefill", "decode", "agg", "workers")


def _path(i: int, key: str = "") -> str:
    return f"$.services[{i}]" + (f".{key}" if key else "")


def _one(ctx: Context, i: int, svc: ServiceConfig) -> Iterator[Issue]:
    kind = SERVICE_KINDS.get(svc.type)
    if kind is None:
        yield ctx.issue(
            _path(i, "type"),
            f"unknown service type '{svc.type}'; available: {', '.join(sorted(SERVICE_KINDS))}",
        )
        return
    if not kind.has_command and svc.command is None and svc.external is None:
        yield ctx.issue(
            _path(i, "command"), f"a {svc.type} service needs `command:` (the argv to run)"
        )
    for key, values in (("command", svc.command), ("args", svc.args)):
        if values is not None and any(not v.strip() for v in values):
            yield ctx.issue(_path(i, key), f"services[{i}].{key} has an empty entry")
    if svc.command is not None and not svc.command:
        yield ctx.issue(_path(i, "command"), "must not be an empty list")
    if svc.build_command is not None and not svc.build_command:
        yield ctx.issue(_path(i, "build_command"), "must not be an empty list; drop the key")
    if svc.start is not None and svc.start not in SERVICE_STARTS:
        yield ctx.issue(
            _path(i, "start"),
            f"'{svc.start}' is not a start phase; use one of {', '.join(SERVICE_STARTS)}",
        )
    placement = svc.placement
    if placement is not None:
        if placement.node not in SERVICE_PLACEMENTS:
            yield ctx.issue(
                _path(i, "placement.node"),
                f"'{placement.node}' is not a service placement; use one of "
                f"{', '.join(SERVICE_PLACEMENTS)}",
            )
        if placement.node == "dedicated" and not kind.infra_class:
            yield ctx.issue(
                _path(i, "placement.node"),
                f"dedicated placement is for etcd, nats and mooncake-master, not {svc.type}",
            )
        if placement.per not in ("node", "worker"):
            yield ctx.issue(_path(i, "placement.per"), "use node or worker")
        elif placement.per == "worker":
            if placement.node not in _PER_WORKER_NODES:
                yield ctx.issue(
                    _path(i, "placement.per"),
                    "per: worker needs placement.node prefill, decode, agg or workers",
                )
            if placement.pool is not None or svc.nodes is not None:
                yield ctx.issue(_path(i, "placement.per"), "per: worker cannot own or join a pool")
    if svc.external is not None and not kind.infra_class:
        yield ctx.issue(
            _path(i, "external"),
            f"external endpoints are for etcd, nats and mooncake-master, not {svc.type}",
        )
    unknown = sorted(set(svc.options) - set(kind.options))
    if unknown:
        allowed = ", ".join(kind.options) or "none"
        yield ctx.issue(
            _path(i, "options"),
            f"unknown option(s) {', '.join(unknown)} for a {svc.type} service; allowed: {allowed}",
        )
    payload = svc.options.get("max_payload_mb")
    if payload is not None and (
        isinstance(payload, bool) or not isinstance(payload, int) or not 1 <= payload <= 1024
    ):
        yield ctx.issue(
            _path(i, "options.max_payload_mb"),
            f"max_payload_mb must be a whole number of MiB from 1 to 1024, got {payload!r:.60}",
        )
    if svc.source is not None:
        if svc.source.rev in MOVING_REFS:
            yield ctx.issue(
                _path(i, "source.rev"),
                f"source.rev must be an immutable ref, not a moving branch name: "
                f"'{svc.source.rev}'",
            )
        node = placement.node if placement is not None else kind.placement
        if svc.nodes is not None or node not in ("head", "infra", "dedicated"):
            yield ctx.issue(
                _path(i, "source"), "a git source needs a single-node placement (head or infra)"
            )
    if svc.nodes is not None:
        if svc.nodes < 1:
            yield ctx.issue(_path(i, "nodes"), f"must be at least 1; got {svc.nodes}")
        if placement is not None and (placement.node != "head" or placement.pool is not None):
            yield ctx.issue(
                _path(i, "placement"),
                "a service that owns nodes runs on its own pool; drop its placement",
            )
    if svc.terminal:
        if ctx.recipe.benchmark.type != "manual":
            yield ctx.issue(
                _path(i, "terminal"),
                "a terminal service ends the job itself; it cannot be combined with "
                f"benchmark.type '{ctx.recipe.benchmark.type}' (use manual)",
            )
        if svc.external is not None:
            yield ctx.issue(_path(i, "terminal"), "an external service cannot be terminal")


def services(ctx: Context) -> Iterator[Issue]:
    seen: set[str] = set()
    for i, svc in enumerate(ctx.recipe.services):
        if svc.name in seen:
            yield ctx.issue(
                _path(i, "name"), f"services[].name must be unique; duplicate: '{svc.name}'"
            )
        seen.add(svc.name)
        yield from _one(ctx, i, svc)
    enabled = [s for s in ctx.recipe.services if s.enabled]
    dedicated = {
        s.type: s.placement is not None and s.placement.node == "dedicated"
        for s in enabled
        if s.type in ("etcd", "nats")
    }
    if len(set(dedicated.values())) > 1:
        yield ctx.issue(
            "$.services",
            "services etcd and nats must agree on placement.node: dedicated (they share the "
            "infra node)",
        )
    owners = [s.name for s in ctx.recipe.services if s.nodes is not None]
    for i, svc in enumerate(ctx.recipe.services):
        pool = svc.placement.pool if svc.placement is not None else None
        if pool is not None and pool not in owners:
            yield ctx.issue(
                _path(i, "placement.pool"),
                f"'{pool}' names no service that declares nodes (pools: "
                f"{', '.join(owners) or 'none'})",
            )
    masters = [s for s in enabled if s.type == "mooncake-master"]
    if len(masters) > 1:
        yield ctx.issue("$.services", "declare at most one mooncake-master service")
    if any(s.type == "mooncake-store" for s in enabled) and not masters:
        yield ctx.issue("$.services", "a mooncake-store service needs a mooncake-master service")


def _arg(args: dict[str, object], name: str) -> object:
    return args.get(name, args.get(name.replace("-", "_")))


def _moves_kv_with_mooncake(ctx: Context, role: str, engine: str) -> bool:
    """Whether a prefill/decode role transfers its KV cache with Mooncake."""
    config = ctx.recipe.roles[role]
    args = dict(config.args)
    if engine == "sglang":
        return str(_arg(args, "disaggregation-transfer-backend")).lower() == "mooncake"
    connector = _arg(args, "connector")
    if connector is None:
        connector = connector_of(ctx.engine(role))
    transfer = _arg(args, "kv-transfer-config")
    return any("mooncake" in str(value).lower() for value in (connector, transfer) if value)


_MOONCAKE_FIX = {
    "sglang": "set disaggregation-transfer-backend: mooncake in roles.prefill.args and "
    "roles.decode.args",
    "vllm": "set connector to a Mooncake kv-transfer-config (engine.connector or "
    "roles.<role>.args.connector)",
}


def mooncake_transfer(ctx: Context) -> Iterator[Issue]:
    """A Mooncake master (v1 ``backend.mooncake_kv_store``) with P/D workers that do not move
    their KV cache through Mooncake: the store would sit unused (docs/recipes.md#services-rules).
    """
    index = next(
        (i for i, s in enumerate(ctx.recipe.services) if s.enabled and s.type == "mooncake-master"),
        None,
    )
    if index is None or not ctx.disaggregated:
        return
    roles = [r.name for r in ctx.roles if r.name in ("prefill", "decode")]
    engines = {ctx.engine_type(role) for role in roles}
    if len(engines) != 1 or next(iter(engines)) not in _MOONCAKE_FIX:
        return
    engine = next(iter(engines))
    if any(_moves_kv_with_mooncake(ctx, role, engine) for role in roles):
        return
    what = (
        "no prefill or decode role sets disaggregation-transfer-backend: mooncake"
        if engine == "sglang"
        else "no prefill or decode role's KV connector is a Mooncake one"
    )
    yield ctx.issue(
        _path(index),
        f"a mooncake-master service ({ctx.recipe.services[index].name!r}, the v1 "
        f"backend.mooncake_kv_store) serves Mooncake KV transfers, but {what}; "
        f"{_MOONCAKE_FIX[engine]}, or remove the mooncake-master service",
    )


RULES = (services, mooncake_transfer)
