"""Rules for ``frontend``, placements, heterogeneous jobs and the time limit
(docs/recipes.md#frontend-rules)."""

from __future__ import annotations

from collections.abc import Iterator

from srt_schema.errors import Issue
from srt_schema.recipe import FrontendConfig
from srt_schema.registry import FRONTENDS
from srt_schema.roles import connector_of, engine_struct
from srt_schema.time_limit import time_limit_seconds
from srt_schema.validate.context import Context

__all__ = ["RULES"]

_FRONTEND_PLACEMENTS = ("head", "first_decode", "dedicated")
_BENCHMARK_PLACEMENTS = ("head", "last_decode", "dedicated")


def frontend_type(ctx: Context) -> Iterator[Issue]:
    frontend = ctx.recipe.frontend
    kind = frontend.type
    info = FRONTENDS.get(kind)
    if info is None:
        yield ctx.issue(
            "$.frontend.type",
            f"unknown frontend.type '{kind}'; available: {', '.join(sorted(FRONTENDS))}",
        )
        return
    engines = ctx.role_engine_types()
    if info.engines and engines:
        wrong = {r: e for r, e in engines.items() if e not in info.engines}
        if wrong:
            got = ", ".join(f"{r}={e}" for r, e in wrong.items())
            need = " or ".join(info.engines)
            yield ctx.issue(
                "$.frontend.type", f"frontend.type: {kind} requires engine {need}; got {got}"
            )
    if frontend.worker_selection is not None and kind != "dynamo":
        yield ctx.issue(
            "$.frontend.worker_selection",
            "frontend.worker_selection is only supported with frontend.type: dynamo",
        )
    if info.serving in ("worker", "worker_if_agg") and frontend.enable_multiple_frontends:
        yield ctx.issue(
            "$.frontend.enable_multiple_frontends",
            f"frontend.type: {kind} serves from the worker itself; set "
            "enable_multiple_frontends: false",
        )
    # A count written with a single frontend would do nothing (the default, 9, is inert there).
    if (
        not frontend.enable_multiple_frontends
        and ctx.has_raw("frontend", "num_additional_frontends")
        and frontend.num_additional_frontends != FrontendConfig().num_additional_frontends
    ):
        yield ctx.issue(
            "$.frontend.num_additional_frontends",
            f"num_additional_frontends ({frontend.num_additional_frontends}) counts the "
            "frontends behind nginx, and frontend.enable_multiple_frontends is false (one "
            "frontend, no nginx); remove it, or set enable_multiple_frontends: true",
        )
    if info.serving == "worker":
        if ctx.disaggregated:
            yield ctx.issue(
                "$.roles",
                f"frontend.type: {kind} runs one aggregate worker; it has no prefill/decode "
                "layout (use a router or dynamo frontend)",
            )
        elif ctx.workers("agg") != 1:
            yield ctx.issue(
                "$.frontend.type",
                f"frontend.type: {kind} (direct: the worker serves the API itself) supports "
                f"exactly one aggregate worker, got {ctx.workers('agg')}; for several workers "
                f"write frontend.type: {kind}-router or dynamo",
            )
    if kind == "none":
        if any(r.workers for r in ctx.roles):
            yield ctx.issue(
                "$.frontend.type",
                "frontend.type: none is only supported without engine roles (no "
                "prefill/decode/agg workers); pick a frontend for the workers or drop them",
            )
        if frontend.placement.node == "dedicated":
            yield ctx.issue(
                "$.frontend.placement.node",
                "frontend.type: none has no frontend process; dedicated is invalid",
            )
    connector = _vllm_connector(ctx)
    if connector == "moriio" and kind != "vllm-router":
        yield ctx.issue(
            "$.engine.connector",
            "a discovery connector (engine.connector: moriio) registers workers with the vLLM "
            f"Router; it requires frontend.type: vllm-router (got '{kind}')",
        )


def _vllm_connector(ctx: Context) -> str | None:
    engine = engine_struct(ctx.recipe.engine)
    return connector_of(engine)


def placements(ctx: Context) -> Iterator[Issue]:
    node = ctx.recipe.frontend.placement.node
    if node not in _FRONTEND_PLACEMENTS:
        yield ctx.issue(
            "$.frontend.placement.node",
            f"'{node}' is not a frontend placement; use one of {', '.join(_FRONTEND_PLACEMENTS)}",
        )
    elif node == "first_decode" and "decode" not in ctx.recipe.roles:
        yield ctx.issue("$.frontend.placement.node", "first_decode needs a decode role; use head")
    bnode = ctx.recipe.benchmark.placement.node
    if bnode not in _BENCHMARK_PLACEMENTS:
        yield ctx.issue(
            "$.benchmark.placement.node",
            f"'{bnode}' is not a benchmark placement; use one of "
            f"{', '.join(_BENCHMARK_PLACEMENTS)}",
        )
    elif bnode == "last_decode" and ctx.workers("decode") == 0:
        yield ctx.issue(
            "$.benchmark.placement.node",
            "benchmark.placement.node is last_decode, but no decode workers were found",
        )


def het_jobs(ctx: Context) -> Iterator[Issue]:
    if not ctx.recipe.resources.het_jobs:
        return
    path = "$.resources.het_jobs"
    if not ctx.disaggregated:
        yield ctx.issue(
            path,
            "het_jobs=true requires a disaggregated layout (declare roles.prefill and "
            "roles.decode)",
        )
        return
    for name in ("prefill", "decode"):
        role = next((r for r in ctx.roles if r.name == name), None)
        if role is None or role.nodes < 1:
            yield ctx.issue(
                path, f"het_jobs=true needs roles.{name}.nodes >= 1 (a component of its own)"
            )
    for role_name, kind in ctx.role_engine_types().items():
        if kind != "sglang":
            yield ctx.issue(
                path,
                f"het_jobs=true is only supported on the sglang engine; got {role_name}={kind}",
            )
            break
    dedicated = [
        f"{where}.placement.node: dedicated"
        for where, node in (
            ("frontend", ctx.recipe.frontend.placement.node),
            ("benchmark", ctx.recipe.benchmark.placement.node),
        )
        if node == "dedicated"
    ]
    if dedicated:
        yield ctx.issue(
            path, f"{' / '.join(dedicated)} is not supported together with het_jobs=true"
        )
    owners = [s.name for s in ctx.recipe.services if s.nodes is not None]
    if owners:
        yield ctx.issue(
            path,
            "services[].nodes (pools) are not supported together with resources.het_jobs: true; "
            f"owners: {', '.join(owners)}",
        )


def time_limit(ctx: Context) -> Iterator[Issue]:
    """``slurm.time_limit`` (or srtslurm.yaml's ``default_time_limit``, filled in at load) is
    sbatch's ``--time`` and the limit a local run stops at: a value Slurm refuses is refused."""
    value = ctx.recipe.slurm.time_limit
    if value is None:
        return
    try:
        time_limit_seconds(value)
    except ValueError as exc:
        yield ctx.issue("$.slurm.time_limit", str(exc))


RULES = (frontend_type, placements, het_jobs, time_limit)
