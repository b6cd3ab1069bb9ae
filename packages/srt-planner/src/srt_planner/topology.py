"""Endpoints -> worker processes with their ports (docs/planner.md#gpu-packing, #ports)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import assert_never

from srt_planner._recipe import (
    Engine,
    ResolvedRole,
    capabilities,
    colocates_prefill_decode,
    engine_of,
    failover_of,
    is_mpi,
    resolve_roles,
)
from srt_planner.carving import Carving
from srt_planner.context import frontend_type_of
from srt_planner.engines.base import WorkerProcess
from srt_planner.engines.sidecar import sidecar_mode
from srt_planner.engines.vllm import data_parallel, replica_size
from srt_planner.errors import PlanningError, PlanningProblemsError
from srt_planner.gpu_packing import Endpoint, RoleLayout, check_worker_gpus, pack_endpoints
from srt_planner.ports import PortAllocator
from srt_schema.recipe import (
    AtomBackend,
    MockerBackend,
    Recipe,
    SGLangBackend,
    TileRTBackend,
    TRTLLMBackend,
    VLLMBackend,
)

__all__ = ["engine_count", "expand_processes", "plan_endpoints"]


def plan_endpoints(recipe: Recipe, carving: Carving) -> tuple[Endpoint, ...]:
    """Pack every role's workers onto the worker nodes (het: each side on its component)."""
    gpn = recipe.resources.gpus_per_node
    roles = resolve_roles(recipe)
    engines = {role.name: engine_of(recipe, role.name) for role in roles}
    separate = not any(colocates_prefill_decode(engine) for engine in engines.values())

    def layout(role: ResolvedRole, het_group: int | None) -> RoleLayout:
        return RoleLayout(
            role=role.name,
            workers=role.workers,
            gpus_per_worker=role.gpus_per_worker,
            packed=is_mpi(engines[role.name]),
            colocate=role.colocate,
            het_group=het_group,
        )

    spread = recipe.resources.spread_workers
    _check_role_budgets(roles, [layout(r, None) for r in roles], gpn, spread)
    if carving.het_prefill is not None and carving.het_decode is not None:
        sides = (("prefill", carving.het_prefill, 0), ("decode", carving.het_decode, 1))
        endpoints: list[Endpoint] = []
        for name, nodes, group in sides:
            chosen = [layout(r, group) for r in roles if r.name == name]
            endpoints += pack_endpoints(chosen, nodes, gpn, spread_workers=spread)
        return tuple(endpoints)
    layouts = [layout(role, None) for role in roles]
    return pack_endpoints(
        layouts, carving.workers, gpn, spread_workers=spread, separate_prefill_decode=separate
    )


def _check_role_budgets(
    roles: Sequence[ResolvedRole], layouts: Sequence[RoleLayout], gpn: int, spread: bool
) -> None:
    """Each role must fit on the nodes it declares (the shared cursor would hide who overflowed).

    Roles are independent here, so every role that does not fit is named in one error.
    """
    problems: list[str] = []
    for role, layout in zip(roles, layouts, strict=True):
        if role.workers == 0:
            continue
        try:
            check_worker_gpus(layout, gpn)
        except PlanningError as exc:
            problems.append(str(exc))
            continue
        if role.colocate:
            continue
        nodes = [f"{role.name}-{i}" for i in range(role.nodes)]
        try:
            pack_endpoints([layout], nodes, gpn, spread_workers=spread)
        except PlanningError:
            problems.append(
                f"$.roles.{role.name}: {role.name} does not fit: {role.workers} worker(s) x "
                f"{role.gpus_per_worker} "
                f"GPU(s) need more than the {role.nodes} node(s) x {gpn} GPUs of "
                f"roles.{role.name}.nodes; "
                f"raise roles.{role.name}.nodes or lower roles.{role.name}.workers / .gpus"
            )
    if problems:
        raise PlanningProblemsError(problems)


def _vllm_blocks(role: ResolvedRole, gpus_on_node: int, gpus_total: int) -> tuple[int, int]:
    """(kv_events block per process, nixl block per endpoint) for vLLM data parallelism."""
    args = dict(role.config.args)
    if data_parallel(args) <= 1:
        return 1, 1
    replica = replica_size(args)
    return max(1, gpus_on_node // replica), max(1, gpus_total // replica)


def engine_count(engine: Engine) -> int:
    """Engines per worker process: 1, or 1 + ``engine.failover.shadow_engines`` (vLLM)."""
    failover = failover_of(engine)
    if failover is not None:
        return 1 + failover.shadow_engines
    return 1


def expand_processes(
    recipe: Recipe, endpoints: Sequence[Endpoint], allocator: PortAllocator
) -> tuple[tuple[WorkerProcess, ...], ...]:
    """One process per endpoint node, ports handed out in the documented order.

    Under vLLM failover every endpoint yields one group per engine (engine 0 first): a shadow
    engine is a process of its own with its own ports on the same nodes and GPUs.
    """
    roles = {role.name: role for role in resolve_roles(recipe)}
    sidecars = frontend_type_of(recipe) == "dynamo" and sidecar_mode(recipe)
    expanded: list[tuple[WorkerProcess, ...]] = []
    for endpoint in endpoints:
        engine: Engine = engine_of(recipe, endpoint.role)
        for engine_id in range(engine_count(engine)):
            expanded.append(
                _expand_endpoint(
                    recipe,
                    role=roles[endpoint.role],
                    engine=engine,
                    endpoint=endpoint,
                    allocator=allocator,
                    sidecars=sidecars,
                    engine_id=engine_id,
                )
            )
    return tuple(expanded)


def _expand_endpoint(
    recipe: Recipe,
    *,
    role: ResolvedRole,
    engine: Engine,
    endpoint: Endpoint,
    allocator: PortAllocator,
    sidecars: bool,
    engine_id: int,
) -> tuple[WorkerProcess, ...]:
    leader = endpoint.leader
    shared: dict[str, int] = {}
    if endpoint.role == "prefill":
        shared["bootstrap"] = allocator.take("bootstrap", leader)
    total = sum(len(g) for g in endpoint.gpus)
    nixl_block = 1
    is_vllm_dp = capabilities(engine).data_parallel and data_parallel(dict(role.config.args)) > 1
    # On one host (local launcher) every process of a data-parallel vLLM worker needs its own
    # NIXL block: the nodes' blocks would otherwise be the same ports of the same host.
    own_nixl = not is_vllm_dp or allocator.single_host
    if is_vllm_dp:
        _, nixl_block = _vllm_blocks(role, len(endpoint.gpus[0]), total)
        if not allocator.single_host:
            shared["nixl"] = allocator.take("nixl", leader, nixl_block)
        shared["dp_rpc"] = allocator.take("dp_rpc", leader)
    processes: list[WorkerProcess] = []
    for rank, (node, gpus) in enumerate(zip(endpoint.nodes, endpoint.gpus, strict=True)):
        ports: dict[str, int] = {"sys": allocator.take("sys", node)}
        if rank == 0:
            ports["http"] = allocator.take("http", node)
        kv_block = _vllm_blocks(role, len(gpus), total)[0] if is_vllm_dp else 1
        ports["kv_events"] = allocator.take("kv_events", node, kv_block)
        if own_nixl:
            ports["nixl"] = allocator.take("nixl", node, nixl_block)
        wanted = {**role.config.env, **recipe.environment}
        if wanted.get("DYN_CONNECTOR") == "kvbm":
            ports["kvbm_zmq"] = allocator.take("kvbm_zmq", node)
        if sidecars and rank == 0:
            # Only the leader exposes native gRPC and runs the sidecar (docs/planner.md#sglang).
            ports["sidecar_grpc"] = allocator.take("sidecar_grpc", node)
        ports.update(shared)
        ports.update(_engine_ports(engine, allocator, node, rank, len(endpoint.nodes)))
        if rank == 0 and len(endpoint.nodes) > 1 and engine_count(engine) > 1:
            # Every engine of a multi-node worker has its own torch.distributed store port
            # (job-wide counter, so two workers never meet on one host, local launcher included).
            ports["master_port"] = allocator.take("trtllm_dist_init", node)
        processes.append(
            WorkerProcess(
                endpoint=endpoint,
                node=node,
                node_rank=rank,
                gpus=gpus,
                ports=ports,
                shared=tuple(k for k in shared if k != "nixl"),
                engine=engine_id,
            )
        )
    return tuple(processes)


def _engine_ports(
    engine: Engine, allocator: PortAllocator, node: str, rank: int, span: int
) -> dict[str, int]:
    match engine:
        case SGLangBackend():
            ports = {"nccl": allocator.take("nccl", node)}
            if rank == 0 and span > 1:
                ports["dist_init"] = allocator.take("dist_init", node)
            return ports
        case VLLMBackend():
            return {"vllm_port": allocator.take("vllm_port", node)}
        case TRTLLMBackend():
            return {"trtllm_dist_init": allocator.take("trtllm_dist_init", node)}
        case MockerBackend() | AtomBackend() | TileRTBackend():
            return {}
        case _:
            assert_never(engine)
