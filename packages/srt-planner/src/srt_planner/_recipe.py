"""The planner's one door into recipe facts (roles, engines).

Role defaults and engine resolution belong to srt-schema (``srt_schema.roles``); every planner
module reads them through this module so the dependency sits in one place.
"""

from __future__ import annotations

from srt_schema.recipe import Recipe
from srt_schema.roles import (
    ROLE_NAMES,
    EngineConfig,
    ResolvedRole,
    RoleName,
    capabilities,
    colocates_across_nodes,
    colocates_prefill_decode,
    connector_of,
    dp_launch_mode_of,
    engine_of,
    failover_of,
    is_mpi,
    sequential_node_start_of,
)
from srt_schema.roles import resolve_roles as _resolve_roles

__all__ = [
    "ROLE_ORDER",
    "Engine",
    "ResolvedRole",
    "RoleName",
    "capabilities",
    "colocates_across_nodes",
    "colocates_prefill_decode",
    "connector_of",
    "dp_launch_mode_of",
    "engine_of",
    "failover_of",
    "is_mpi",
    "resolve_roles",
    "sequential_node_start_of",
]

ROLE_ORDER: tuple[RoleName, ...] = ROLE_NAMES
Engine = EngineConfig


def resolve_roles(recipe: Recipe) -> tuple[ResolvedRole, ...]:
    """Declared roles in the fixed order prefill, decode, agg, with GPU defaults applied."""
    return _resolve_roles(recipe)
