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
    VLLMFailoverConfig,
)

__all__ = [
    "ENGINE_CAPABILITIES",
    "ENGINE_TYPES",
    "ROLE_NAMES",
    "EngineCapabilities",
    "EngineConfig",
    "EngineType",
    "ResolvedRole",
    "RoleName",
    "capabilities",
    "colocates_across_nodes",
    "colocates_prefill_decode",
    "connector_of",
    "dp_launch_mode_of",
    "engine_of",
    "engine_struct",
    "engine_type",
    "failover_of",
    "is_disaggregated",
    "is_mpi",
    "resolve_roles",
    "sequential_node_start_of",
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


class EngineCapabilities(msgspec.Struct, frozen=True, kw_only=True):
    """What an engine can do, asked by callers instead of ``isinstance(engine, XBackend)``."""

    #: One MPI srun per endpoint with one task per GPU; endpoints pack onto shared nodes.
    mpi_launch: bool = False
    #: The planner lays out the Dynamo sidecar mode for it.
    dynamo_sidecar: bool = False
    #: ``engine.failover`` (shadow engines, GMS) exists.
    failover: bool = False
    #: ``data-parallel-size`` in ``roles.*.args`` expands into processes and instances.
    data_parallel: bool = False
    #: ``engine.connector`` (and ``roles.*.args.connector``) picks the KV connector.
    kv_connector: bool = False
    #: Prefill and decode may share nodes (``allow_prefill_decode_colocation``).
    prefill_decode_colocation: bool = False


#: The one table of engine capabilities (the frontends each engine can serve behind are
#: ``srt_schema.registry.FRONTENDS[...].engines``).
ENGINE_CAPABILITIES: dict[EngineType, EngineCapabilities] = {
    "atom": EngineCapabilities(),
    "sglang": EngineCapabilities(dynamo_sidecar=True),
    "tilert": EngineCapabilities(),
    "trtllm": EngineCapabilities(mpi_launch=True, dynamo_sidecar=True),
    "vllm": EngineCapabilities(
        dynamo_sidecar=True,
        failover=True,
        data_parallel=True,
        kv_connector=True,
        prefill_decode_colocation=True,
    ),
    "mocker": EngineCapabilities(),
}


def capabilities(engine: EngineConfig) -> EngineCapabilities:
    return ENGINE_CAPABILITIES[engine_type(engine)]


def is_mpi(engine: EngineConfig) -> bool:
    """TRT-LLM endpoints launch as one MPI srun with one task per GPU."""
    return capabilities(engine).mpi_launch


# The accessors below read a capability's own field; they are the one place that narrows the
# engine union for it.


def failover_of(engine: EngineConfig) -> VLLMFailoverConfig | None:
    """``engine.failover`` of an engine with the failover capability, else None."""
    return engine.failover if isinstance(engine, VLLMBackend) else None


def connector_of(engine: EngineConfig) -> str | None:
    """``engine.connector`` of an engine with the kv_connector capability, else None."""
    return engine.connector if isinstance(engine, VLLMBackend) else None


def colocates_prefill_decode(engine: EngineConfig) -> bool:
    return isinstance(engine, VLLMBackend) and engine.allow_prefill_decode_colocation


def colocates_across_nodes(engine: EngineConfig) -> bool:
    """Colocated prefill and decode may span several nodes."""
    return (
        colocates_prefill_decode(engine)
        and isinstance(engine, VLLMBackend)
        and engine.allow_prefill_decode_colocation_across_nodes
    )


def dp_launch_mode_of(engine: EngineConfig) -> Literal["per_gpu", "per_node"] | None:
    """How a data-parallel engine launches its ranks (None: not data-parallel)."""
    return engine.dp_launch_mode if isinstance(engine, VLLMBackend) else None


def sequential_node_start_of(engine: EngineConfig) -> int:
    """Nodes per launch batch of an MPI engine (0: all at once)."""
    return engine.sequential_node_start if isinstance(engine, TRTLLMBackend) else 0
