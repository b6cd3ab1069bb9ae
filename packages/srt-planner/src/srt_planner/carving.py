"""Carve the granted node list into head / infra / bench, worker nodes and pools
(docs/planner.md#carving, #heterogeneous-jobs)."""

from __future__ import annotations

import msgspec

from srt_planner.allocation import dedicated_roles, pool_sizes, role_node_count
from srt_planner.errors import PlanningError
from srt_planner.hostlist import compress_hostlist
from srt_schema.recipe import Recipe

__all__ = ["Carving", "carve_nodes"]


class Carving(msgspec.Struct, frozen=True, kw_only=True):
    """Which node plays which part; ``prefill_nodes``/``decode_nodes`` only for het jobs."""

    head: str
    infra: str
    bench: str
    frontend: str | None
    workers: tuple[str, ...]
    pools: dict[str, tuple[str, ...]]
    het_prefill: tuple[str, ...] | None = None
    het_decode: tuple[str, ...] | None = None


def _carve_het(recipe: Recipe, groups: tuple[tuple[str, ...], ...]) -> Carving:
    if len(groups) != 2:
        raise PlanningError(
            f"heterogeneous job: expected 2 components, the allocation has {len(groups)}"
        )
    first, second = groups
    dedicated_infra = "infra" in dedicated_roles(recipe)
    if dedicated_infra:
        if len(first) < 2:
            raise PlanningError(
                "heterogeneous job: component 0 needs the dedicated infra node plus prefill nodes "
                f"but has {len(first)} node(s) ({compress_hostlist(first)})"
            )
        infra, prefill = first[0], first[1:]
    else:
        infra, prefill = first[0], first
    head = prefill[0]
    return Carving(
        head=head,
        infra=infra,
        bench=head,
        frontend=None,
        workers=prefill + second,
        pools={},
        het_prefill=prefill,
        het_decode=second,
    )


def carve_nodes(
    recipe: Recipe,
    nodes: tuple[str, ...],
    *,
    het_groups: tuple[tuple[str, ...], ...] | None = None,
) -> Carving:
    """Assign roles to the allocation's nodes (dedicated infra/frontend/client, workers, pools)."""
    if het_groups is not None:
        return _carve_het(recipe, het_groups)
    if not nodes:
        raise PlanningError(
            "the allocation has no nodes; run inside a Slurm job or pass a nodelist"
        )
    requested = dedicated_roles(recipe)
    reserved: dict[str, str] = {}
    remaining = list(nodes)
    if requested:
        count = 1 if recipe.benchmark.colocate_with_frontend else len(requested)
        if len(nodes) <= count:
            raise PlanningError(
                f"dedicated node(s) for {'+'.join(requested)} require at least {count + 1} nodes; "
                f"the allocation has {len(nodes)} ({compress_hostlist(nodes)})"
            )
        if recipe.benchmark.colocate_with_frontend:
            shared = remaining.pop() if "client" in requested else remaining.pop(0)
            reserved = dict.fromkeys(requested, shared)
        else:
            for role in requested:
                if role != "client":
                    reserved[role] = remaining.pop(0)
            if "client" in requested:
                reserved["client"] = remaining.pop()
    pools = pool_sizes(recipe)
    pool_nodes: dict[str, tuple[str, ...]] = {}
    if pools:
        engine = role_node_count(recipe)
        need = engine + sum(pools.values())
        if len(remaining) < need:
            detail = ", ".join(f"{name}={count}" for name, count in pools.items())
            raise PlanningError(
                f"allocation has {len(remaining)} non-reserved node(s) but the recipe needs "
                f"{need}: "
                f"{engine} for engine roles plus pools {detail}"
            )
        workers = tuple(remaining[:engine])
        cursor = engine
        for name, count in pools.items():
            pool_nodes[name] = tuple(remaining[cursor : cursor + count])
            cursor += count
    else:
        workers = tuple(remaining)
    compute = workers + tuple(n for pool in pool_nodes.values() for n in pool)
    first = compute[0] if compute else nodes[0]
    if not workers and pool_nodes:
        first = next(iter(pool_nodes.values()))[0]
    head = reserved.get("frontend", first)
    return Carving(
        head=head,
        infra=reserved.get("infra", head),
        bench=reserved.get("client", head),
        frontend=reserved.get("frontend"),
        workers=workers,
        pools=pool_nodes,
    )
