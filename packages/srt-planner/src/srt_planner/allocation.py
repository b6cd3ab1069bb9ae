"""How many nodes a job asks for, and the ``#SBATCH`` request (docs/planner.md#node-count,
#heterogeneous-jobs).

Node count = engine-role nodes + pool nodes + dedicated nodes. Dedicated nodes are requested by
``placement.node: dedicated`` on infra-class services (etcd, nats, mooncake-master), the frontend
and the benchmark client; with ``benchmark.colocate_with_frontend`` (default) they share one node.
"""

from __future__ import annotations

from typing import Literal

from srt_planner._recipe import (
    colocates_across_nodes,
    colocates_prefill_decode,
    engine_of,
    is_mpi,
    resolve_roles,
)
from srt_planner.errors import PlanningError
from srt_planner.plan import AllocationRequest, HetComponent
from srt_schema.cluster import ClusterConfig
from srt_schema.recipe import Recipe, ServiceConfig
from srt_schema.time_limit import time_limit_seconds

__all__ = [
    "DEFAULT_ACCOUNT",
    "DEFAULT_PARTITION",
    "DEFAULT_TIME_LIMIT",
    "INFRA_KINDS",
    "DedicatedRole",
    "dedicated_roles",
    "effective_time_limit",
    "het_enabled",
    "local_time_limit",
    "local_time_limit_seconds",
    "plan_allocation",
    "pool_sizes",
    "role_node_count",
]

DEFAULT_TIME_LIMIT = "01:00:00"
#: Rendered when neither the recipe nor the cluster names one (the caller may pass the submitting
#: shell's ``SLURM_ACCOUNT`` / ``SLURM_PARTITION`` through the cluster config first).
DEFAULT_ACCOUNT = "default"
DEFAULT_PARTITION = "default"
INFRA_KINDS = frozenset({"etcd", "nats", "mooncake-master"})

DedicatedRole = Literal["infra", "frontend", "client"]


def _enabled(recipe: Recipe) -> tuple[ServiceConfig, ...]:
    return tuple(service for service in recipe.services if service.enabled)


def dedicated_roles(recipe: Recipe) -> tuple[DedicatedRole, ...]:
    """Requested dedicated roles in the fixed carving order: infra, frontend, client."""
    found: list[DedicatedRole] = []
    if any(
        s.type in INFRA_KINDS and s.placement is not None and s.placement.node == "dedicated"
        for s in _enabled(recipe)
    ):
        found.append("infra")
    if recipe.frontend.placement.node == "dedicated":
        found.append("frontend")
    if recipe.benchmark.placement.node == "dedicated":
        found.append("client")
    return tuple(found)


def effective_time_limit(recipe: Recipe, cluster: ClusterConfig) -> str:
    """sbatch's ``--time``: the recipe's, else ``default_time_limit``, else 01:00:00."""
    return recipe.slurm.time_limit or cluster.default_time_limit or DEFAULT_TIME_LIMIT


def local_time_limit(recipe: Recipe, cluster: ClusterConfig) -> str | None:
    """The time limit a local run enforces itself (None under Slurm, which enforces it)."""
    if cluster.launcher != "local":
        return None
    text = effective_time_limit(recipe, cluster)
    return None if time_limit_seconds(text) is None else text


def local_time_limit_seconds(recipe: Recipe, cluster: ClusterConfig) -> int | None:
    """:func:`local_time_limit` in seconds (validate refused a value that does not parse)."""
    text = local_time_limit(recipe, cluster)
    return None if text is None else time_limit_seconds(text)


def pool_sizes(recipe: Recipe) -> dict[str, int]:
    """Pool owner name -> node count, in declaration order."""
    return {s.name: s.nodes for s in _enabled(recipe) if s.nodes is not None}


def role_node_count(recipe: Recipe) -> int:
    """Nodes owned by engine roles (colocated decode owns none).

    vLLM P/D colocation (``allow_prefill_decode_colocation``) packs both roles by
    ``ceil(total GPUs / gpus_per_node)`` when they fit one node, or across nodes when
    ``allow_prefill_decode_colocation_across_nodes`` is on (docs/recipes.md#dry-run-output).
    """
    roles = resolve_roles(recipe)
    gpn = recipe.resources.gpus_per_node
    engines = [engine_of(recipe, role.name) for role in roles]
    colocation = [e for e in engines if colocates_prefill_decode(e)]
    if colocation and {r.name for r in roles} == {"prefill", "decode"}:
        gpus = sum(role.workers * role.gpus_per_worker for role in roles)
        if gpus <= gpn or colocates_across_nodes(colocation[0]):
            return max(1, -(-gpus // gpn))
    return sum(role.nodes for role in roles)


def het_enabled(recipe: Recipe, cluster: ClusterConfig) -> bool:
    """Whether the job is submitted as two heterogeneous components (prefill, decode)."""
    wanted = recipe.resources.het_jobs
    if wanted is None:
        wanted = cluster.use_het_jobs
    names = {role.name for role in resolve_roles(recipe)}
    disaggregated = {"prefill", "decode"} <= names
    if recipe.resources.het_jobs is True and not disaggregated:
        raise PlanningError(
            "$.resources.het_jobs: heterogeneous jobs need roles.prefill and roles.decode; "
            "remove het_jobs or make the recipe disaggregated"
        )
    return bool(wanted) and disaggregated


def _extra_nodes(recipe: Recipe) -> int:
    requested = dedicated_roles(recipe)
    if not requested:
        return 0
    return 1 if recipe.benchmark.colocate_with_frontend else len(requested)


def _uses_trtllm(recipe: Recipe) -> bool:
    return any(is_mpi(engine_of(recipe, role.name)) for role in resolve_roles(recipe))


def _directives(recipe: Recipe, cluster: ClusterConfig) -> dict[str, str]:
    merged = dict(cluster.default_sbatch_directives or {})
    merged.update(recipe.sbatch_directives)
    return {key: merged[key] for key in sorted(merged)}


def plan_allocation(
    recipe: Recipe, cluster: ClusterConfig, *, runner_name: str | None = None
) -> AllocationRequest:
    """The ``#SBATCH`` request for ``recipe``; ``runner_name`` overrides the job name."""
    gpn = recipe.resources.gpus_per_node
    roles = resolve_roles(recipe)
    pools = pool_sizes(recipe)
    het: tuple[HetComponent, ...] = ()
    if het_enabled(recipe, cluster):
        requested = dedicated_roles(recipe)
        if "frontend" in requested or "client" in requested or pools:
            raise PlanningError(
                "$.resources.het_jobs: heterogeneous jobs support neither dedicated "
                "frontend/client nodes nor service pools; remove one of them"
            )
        by_name = {role.name: role for role in roles}
        first = by_name["prefill"].nodes + (1 if "infra" in requested else 0)
        second = by_name["decode"].nodes
        het = (HetComponent(nodes=first, segment=first), HetComponent(nodes=second, segment=second))
        total = first + second
    else:
        total = role_node_count(recipe) + sum(pools.values()) + _extra_nodes(recipe)
    if total < 1:
        raise PlanningError(
            "$.roles: the recipe asks for 0 nodes; give a role 'nodes:' or a service 'nodes:'"
        )
    trtllm = _uses_trtllm(recipe)
    return AllocationRequest(
        job_name=runner_name or recipe.name,
        nodes=total,
        ntasks=gpn * total if trtllm else total,
        ntasks_per_node=gpn if trtllm else 1,
        gpus_per_node=gpn if cluster.use_gpus_per_node_directive else None,
        segment=total if cluster.use_segment_sbatch_directive else None,
        exclusive=cluster.use_exclusive_sbatch_directive,
        account=recipe.slurm.account or cluster.default_account or DEFAULT_ACCOUNT,
        partition=recipe.slurm.partition or cluster.default_partition or DEFAULT_PARTITION,
        time_limit=effective_time_limit(recipe, cluster),
        directives=_directives(recipe, cluster),
        het=het,
    )
