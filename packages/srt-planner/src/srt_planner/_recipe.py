"""The planner's one door into recipe facts (roles, engines).

The loading pipeline of srt-schema will export ``roles.resolve_roles`` / ``roles.engine_of``; until
it does this module derives the same facts from a validated ``Recipe``. Every planner module reads
roles and engines through here, so switching to the schema's functions is a change in one place.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from srt_planner.errors import PlanningError
from srt_schema.recipe import (
    AtomBackend,
    MockerBackend,
    Recipe,
    RoleConfig,
    SGLangBackend,
    TileRTBackend,
    TRTLLMBackend,
    VLLMBackend,
)

__all__ = ["ROLE_ORDER", "Engine", "ResolvedRole", "RoleName", "engine_of", "resolve_roles"]

RoleName = Literal["prefill", "decode", "agg"]
ROLE_ORDER: tuple[RoleName, ...] = ("prefill", "decode", "agg")

Engine = AtomBackend | SGLangBackend | TileRTBackend | TRTLLMBackend | VLLMBackend | MockerBackend

_BY_NAME: dict[str, type[Engine]] = {
    "atom": AtomBackend,
    "sglang": SGLangBackend,
    "tilert": TileRTBackend,
    "trtllm": TRTLLMBackend,
    "vllm": VLLMBackend,
    "mocker": MockerBackend,
}


class ResolvedRole(msgspec.Struct, frozen=True, kw_only=True):
    """One declared role with its defaults applied (planner-and-runtime.md §1.2)."""

    name: RoleName
    nodes: int
    colocate: bool
    workers: int
    gpus_per_worker: int
    config: RoleConfig


def _engine_value(value: str | Engine) -> Engine:
    if isinstance(value, str):
        return _BY_NAME[value]()
    return value


def engine_of(recipe: Recipe, role: str) -> Engine:
    """The engine struct of ``role`` (top-level ``engine`` or ``roles.<role>.engine``)."""
    config = recipe.roles.get(role)
    if config is not None and config.engine is not None:
        return _engine_value(config.engine)
    if recipe.engine is not None:
        return _engine_value(recipe.engine)
    raise PlanningError(
        f"$.roles.{role}.engine: no engine for role {role!r}; set a top-level 'engine:'"
    )


def resolve_roles(recipe: Recipe) -> tuple[ResolvedRole, ...]:
    """Declared roles in the fixed order prefill, decode, agg, with GPU defaults applied."""
    gpn = recipe.resources.gpus_per_node
    resolved: list[ResolvedRole] = []
    for name in ROLE_ORDER:
        config = recipe.roles.get(name)
        if config is None:
            continue
        colocate = config.nodes == "colocate"
        if colocate and name != "decode":
            raise PlanningError(f"$.roles.{name}.nodes: 'colocate' is allowed on roles.decode only")
        nodes = 0 if colocate or config.nodes is None else int(config.nodes)
        if config.nodes is None and not colocate and name == "agg":
            nodes = 1
        workers = config.workers or 0
        if config.gpus is not None:
            gpus = config.gpus
        elif colocate:
            raise PlanningError(
                "$.roles.decode.nodes: 'colocate' needs roles.prefill.gpus and roles.decode.gpus"
            )
        elif config.nodes is not None and config.workers:
            gpus = nodes * gpn // workers
        else:
            gpus = gpn
        if gpus < 1:
            raise PlanningError(
                f"$.roles.{name}: {workers} workers on {nodes} node(s) x {gpn} GPUs leaves "
                f"{gpus} GPUs per worker; set roles.{name}.gpus"
            )
        resolved.append(
            ResolvedRole(
                name=name,
                nodes=nodes,
                colocate=colocate,
                workers=workers,
                gpus_per_worker=gpus,
                config=config,
            )
        )
    return tuple(resolved)
