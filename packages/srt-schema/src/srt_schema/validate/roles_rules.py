"""Rules for ``roles`` and engines (docs/recipes.md#engine-and-roles, #roles-rules)."""

from __future__ import annotations

from collections.abc import Iterator

from srt_schema.errors import Issue
from srt_schema.registry import PARALLEL_ARG_BOUND, PARALLEL_ARGS
from srt_schema.roles import ROLE_NAMES
from srt_schema.structural import join_path
from srt_schema.validate.context import Context

__all__ = ["RULES"]

_SIDECAR_ENGINES = ("sglang", "vllm", "trtllm")


def role_names(ctx: Context) -> Iterator[Issue]:
    for name in ctx.recipe.roles:
        if name not in ROLE_NAMES:
            yield ctx.issue(
                f"$.roles.{name}", f"unknown role '{name}'; valid roles are prefill, decode, agg"
            )
    declared = set(ctx.recipe.roles)
    if "agg" in declared and declared & {"prefill", "decode"}:
        yield ctx.issue(
            "$.roles",
            "a recipe is aggregated (agg) or disaggregated (prefill + decode), never both; "
            "drop roles.agg or the prefill/decode roles",
        )


def role_nodes(ctx: Context) -> Iterator[Issue]:
    for name, config in ctx.recipe.roles.items():
        path = f"$.roles.{name}"
        nodes = config.nodes
        if nodes == "colocate":
            if name != "decode":
                yield ctx.issue(
                    f"{path}.nodes", "only the decode role can colocate (on the prefill nodes)"
                )
        elif isinstance(nodes, int):
            if nodes == 0 and name == "decode":
                pass  # the v1 spelling of `colocate`, still used by published schema-2 recipes
            elif nodes < 1:
                yield ctx.issue(f"{path}.nodes", f"must be at least 1; got {nodes}")
        elif name in ("prefill", "decode") and (config.workers or 0) > 0:
            yield ctx.issue(
                f"{path}.nodes",
                f"roles.{name} has workers but no nodes; set `nodes:` (decode may also be "
                "`colocate`)",
            )
        # workers and gpus: ranges in registry.FIELD_BOUNDS (the structural check)
        if config.container is not None and not config.container.strip():
            yield ctx.issue(f"{path}.container", "container must be a non-empty string")


def colocate(ctx: Context) -> Iterator[Issue]:
    decode = ctx.recipe.roles.get("decode")
    if decode is None or decode.nodes not in ("colocate", 0):
        return
    prefill = ctx.recipe.roles.get("prefill")
    missing = [
        role
        for role, config in (("prefill", prefill), ("decode", decode))
        if config is None or config.gpus is None
    ]
    if missing:
        yield ctx.issue(
            "$.roles.decode.nodes",
            "colocated decode (`nodes: colocate`) requires an explicit `gpus:` on both prefill "
            f"and decode (missing on {', '.join(missing)})",
        )
        return
    assert prefill is not None and prefill.gpus is not None and decode.gpus is not None
    p_nodes = prefill.nodes if isinstance(prefill.nodes, int) else 0
    p_workers = prefill.workers or 0
    if p_nodes < 1 or p_workers < 1:
        yield ctx.issue(
            "$.roles.decode.nodes",
            "`nodes: colocate` needs at least one prefill node and one prefill worker to share",
        )
        return
    gpn = ctx.recipe.resources.gpus_per_node
    d_workers = decode.workers or 0
    need = p_workers * prefill.gpus + d_workers * decode.gpus
    have = p_nodes * gpn
    if need > have:
        yield ctx.issue(
            "$.roles.decode.nodes",
            f"colocated decode workers do not fit on the prefill nodes: {p_workers} prefill x "
            f"{prefill.gpus} GPU(s) + {d_workers} decode x {decode.gpus} GPU(s) = {need} GPU(s) "
            f"on {p_nodes} node(s) x {gpn} GPU(s) = {have} GPU(s); lower the workers or GPUs",
        )


def engines(ctx: Context) -> Iterator[Issue]:
    with_engine = [n for n, c in ctx.recipe.roles.items() if c.engine is not None]
    if not with_engine:
        return
    if ctx.recipe.engine is not None:
        for name in with_engine:
            yield ctx.issue(
                f"$.roles.{name}.engine",
                f"roles.{name}.engine cannot be combined with a top-level engine; drop one of them",
            )
        return
    for name in ctx.recipe.roles:
        if name not in with_engine:
            yield ctx.issue(
                f"$.roles.{name}.engine",
                f"roles.{name}.engine must name a type when no top-level engine is set "
                f"(roles {', '.join(with_engine)} set one)",
            )
    if ctx.recipe.frontend.type == "dynamo":
        yield ctx.issue(
            "$.frontend.type",
            "role-specific engines do not yet support the Dynamo frontend or sidecars; "
            "use a router frontend or one top-level engine",
        )
    if ctx.recipe.resources.het_jobs:
        yield ctx.issue(
            "$.resources.het_jobs", "role-specific engines do not yet support resources.het_jobs"
        )
    if ctx.recipe.profiling.type != "none":
        yield ctx.issue("$.profiling.type", "role-specific engines do not yet support profiling")


def role_engine_features(ctx: Context) -> Iterator[Issue]:
    for name, config in ctx.recipe.roles.items():
        kind = ctx.engine_type(name)
        if config.extra_args and kind != "trtllm":
            yield ctx.issue(
                f"$.roles.{name}.extra_args",
                f"roles.{name}.extra_args is only supported by the trtllm engine (this role runs "
                f"{kind}); put flags in roles.{name}.args",
            )
        if config.kv_events not in (None, False) and kind not in ("sglang", "vllm"):
            yield ctx.issue(
                f"$.roles.{name}.kv_events",
                f"roles.{name}.kv_events is not supported by the {kind} engine",
            )


def sidecars(ctx: Context) -> Iterator[Issue]:
    values = {n: c.sidecar for n, c in ctx.recipe.roles.items() if c.sidecar is not None}
    if len(set(values.values())) > 1:
        yield ctx.issue(
            "$.roles",
            "roles.*.sidecar must agree across roles (the Dynamo sidecar mode is job-wide); got "
            + ", ".join(f"{n}={str(v).lower()}" for n, v in sorted(values.items())),
        )
        return
    if ctx.recipe.dynamo.sidecar and False in values.values():
        yield ctx.issue(
            "$.roles", "roles.*.sidecar: false disagrees with dynamo.sidecar: true; drop one"
        )
    if not (ctx.recipe.dynamo.sidecar or True in values.values()):
        return
    if ctx.recipe.frontend.type != "dynamo":
        yield ctx.issue(
            "$.dynamo.sidecar",
            f"the Dynamo sidecar mode needs frontend.type: dynamo (got "
            f"'{ctx.recipe.frontend.type}')",
        )
    for name in ctx.recipe.roles:
        kind = ctx.engine_type(name)
        if kind not in _SIDECAR_ENGINES:
            yield ctx.issue(
                f"$.roles.{name}",
                f"the Dynamo sidecar mode supports sglang, vllm and trtllm, not {kind}",
            )


def parallel_args(ctx: Context) -> Iterator[Issue]:
    """Engine args that are GPU counts (registry.PARALLEL_ARGS) are positive integers: the
    planner divides by them and multiplies with them."""
    bound = PARALLEL_ARG_BOUND
    for name, config in ctx.recipe.roles.items():
        for key, value in config.args.items():
            if key.replace("_", "-") not in PARALLEL_ARGS:
                continue
            path = join_path(f"$.roles.{name}.args", key)
            count = _count_of(value)
            if count is None:
                shown = repr(value) if isinstance(value, str) else _plain(value)
                yield ctx.issue(
                    path,
                    f"{shown[:200]} is not a whole number; {key} must be {bound.describe()} "
                    "(a GPU count)",
                )
            elif not bound.allows(count):
                yield ctx.issue(path, f"{count} is out of range; {key} must be {bound.describe()}")


def _count_of(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    text = value.strip() if isinstance(value, str) else ""
    if text.isascii() and text.isdecimal() and len(text) <= 18:
        return int(text)
    return None


def _plain(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return str(value)


RULES = (role_names, role_nodes, colocate, engines, role_engine_features, sidecars, parallel_args)
