"""Roles and engines, resolved: GPUs per worker, colocation, and each role's engine struct.

docs/recipes.md#engine-and-roles. The recipe keeps what the user wrote; these functions derive the
numbers the planner needs, so there is one place that knows the defaulting rules.
"""

from __future__ import annotations

from typing import Literal

import msgspec

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

__all__ = [
    "ENGINE_TYPES",
    "ROLE_NAMES",
    "EngineConfig",
    "EngineType",
    "ResolvedRole",
    "RoleName",
    "engine_of",
    "engine_struct",
    "engine_type",
    "is_disaggregated",
    "resolve_roles",
    "serving_engine",
]

RoleName = Literal["prefill", "decode", "agg"]
ROLE_NAMES: tuple[RoleName, ...] = ("prefill", "decode", "agg")
EngineType = Literal["atom", "sglang", "tilert", "trtllm", "vllm", "mocker"]
ENGINE_TYPES: tuple[EngineType, ...] = ("atom", "sglang", "tilert", "trtllm", "vllm", "mocker")
EngineConfig = (
    AtomBackend | SGLangBackend | TileRTBackend | TRTLLMBackend | VLLMBackend | MockerBackend
)

_BY_TYPE: dict[str, type[EngineConfig]] = {
    "atom": AtomBackend,
    "sglang": SGLangBackend,
    "tilert": TileRTBackend,
    "trtllm": TRTLLMBackend,
    "vllm": VLLMBackend,
    "mocker": MockerBackend,
}


class ResolvedRole(msgspec.Struct, frozen=True, kw_only=True):
    """One declared role with its defaults applied."""

    name: RoleName
    #: Nodes the role owns; 0 for a decode role colocated on the prefill nodes.
    nodes: int
    colocate: bool
    workers: int
    gpus_per_worker: int
    config: RoleConfig


def engine_struct(value: str | EngineConfig | None) -> EngineConfig:
    """The typed engine for a recipe value: a name gets that engine's defaults; None is SGLang."""
    if value is None:
        return SGLangBackend()
    if isinstance(value, str):
        return _BY_TYPE[value]()
    return value


def engine_type(engine: EngineConfig) -> EngineType:
    tag = type(engine).__struct_config__.tag
    assert isinstance(tag, str) and tag in ENGINE_TYPES
    return tag


def engine_of(recipe: Recipe, role: str) -> EngineConfig:
    """The engine a role runs: its own ``engine`` if set, else the recipe's, else SGLang."""
    config = recipe.roles.get(role)
    if config is not None and config.engine is not None:
        return engine_struct(config.engine)
    return engine_struct(recipe.engine)


def serving_engine(recipe: Recipe) -> EngineConfig:
    """The engine that names the served model: decode's, else agg's, else prefill's."""
    for role in ("decode", "agg", "prefill"):
        if role in recipe.roles:
            return engine_of(recipe, role)
    return engine_struct(recipe.engine)


def is_disaggregated(recipe: Recipe) -> bool:
    return "prefill" in recipe.roles or "decode" in recipe.roles


def _default_gpus(config: RoleConfig, gpus_per_node: int) -> int:
    if config.gpus is not None:
        return config.gpus
    if isinstance(config.nodes, int) and config.workers:
        return config.nodes * gpus_per_node // config.workers
    return gpus_per_node


def resolve_roles(recipe: Recipe) -> tuple[ResolvedRole, ...]:
    """Declared roles in prefill, decode, agg order, with nodes, workers and GPUs resolved.

    Assumes a validated recipe (role names and colocate rules already checked).
    """
    gpn = recipe.resources.gpus_per_node
    out: list[ResolvedRole] = []
    for name in ROLE_NAMES:
        config = recipe.roles.get(name)
        if config is None:
            continue
        colocate = config.nodes == "colocate" or (name == "decode" and config.nodes == 0)
        if colocate:
            nodes = 0
        elif isinstance(config.nodes, int):
            nodes = config.nodes
        else:
            nodes = 1 if name == "agg" else 0
        prefill = recipe.roles.get("prefill")
        if colocate and config.gpus is None and prefill is not None:
            gpus = _default_gpus(prefill, gpn)
        else:
            gpus = _default_gpus(config, gpn)
        out.append(
            ResolvedRole(
                name=name,
                nodes=nodes,
                colocate=colocate,
                workers=config.workers or 0,
                gpus_per_worker=gpus,
                config=config,
            )
        )
    return tuple(out)
