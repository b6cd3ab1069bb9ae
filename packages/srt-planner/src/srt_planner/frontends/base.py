"""Frontend layout shared by every family: where frontends run and on which ports
(docs/planner.md#frontend-layout)."""

from __future__ import annotations

import msgspec

from srt_planner.context import FrontendType, PlanContext
from srt_planner.engines.base import WorkerProcess
from srt_planner.errors import PlanningError
from srt_planner.ports import FRONTEND_INTERNAL_PORT, FRONTEND_PUBLIC_PORT
from srt_schema import registry
from srt_schema.recipe import FrontendConfig

__all__ = ["FrontendLayout", "RouterInput", "is_direct", "placed_node", "plan_frontend_layout"]


class FrontendLayout(msgspec.Struct, frozen=True, kw_only=True):
    """Frontend nodes and ports; ``nginx_node`` set when nginx fans out to several frontends."""

    nodes: tuple[str, ...]
    ports: tuple[int, ...]
    nginx_node: str | None
    public_node: str
    public_port: int


class RouterInput(msgspec.Struct, frozen=True, kw_only=True):
    """Leader processes of every endpoint, by role (static routers list their URLs)."""

    prefill: tuple[WorkerProcess, ...]
    decode: tuple[WorkerProcess, ...]
    agg: tuple[WorkerProcess, ...]


def is_direct(frontend: FrontendType, disaggregated: bool) -> bool:
    """Direct frontends: the agg leader itself serves the public port, no router process
    (``FRONTENDS[...].serving``, the table the validator reads)."""
    return registry.is_direct(frontend, disaggregated)


#: ``frontend.num_additional_frontends``'s schema default: one frontend per worker node besides
#: the head node, at most 10 (the reference's placement, docs/planner.md#frontend-layout).
DEFAULT_ADDITIONAL_FRONTENDS = FrontendConfig().num_additional_frontends


def _frontend_nodes(additional: int, others: list[str]) -> tuple[str, ...]:
    """Where the frontends run. The default count means one per node (capped at the nodes);
    any other count is placed in full, round-robin over the nodes, never capped silently."""
    if additional == DEFAULT_ADDITIONAL_FRONTENDS:
        return tuple(others[: additional + 1])
    return tuple(others[i % len(others)] for i in range(additional + 1))


def _frontend_ports(nodes: tuple[str, ...], local: bool) -> tuple[int, ...]:
    """One port per frontend: the k-th frontend of a node listens on the internal port + k (on
    the local launcher every node is this host, so the i-th frontend takes + i)."""
    if local:
        return tuple(FRONTEND_INTERNAL_PORT + i for i in range(len(nodes)))
    return tuple(FRONTEND_INTERNAL_PORT + nodes[:i].count(node) for i, node in enumerate(nodes))


def _decode_leaders(routers: RouterInput) -> list[str]:
    leaders: list[str] = []
    for proc in routers.decode:
        if proc.node not in leaders:
            leaders.append(proc.node)
    return leaders


def placed_node(ctx: PlanContext, placement: str, routers: RouterInput, what: str) -> str:
    """Resolve ``head`` / ``first_decode`` / ``last_decode`` / ``dedicated`` to a node."""
    match placement:
        case "head" | "dedicated":
            return ctx.carving.head if what == "frontend" else ctx.carving.bench
        case "first_decode" | "last_decode":
            leaders = _decode_leaders(routers)
            if not leaders:
                raise PlanningError(
                    f"$.{what}.placement.node: {placement!r} needs decode workers "
                    "but no decode workers were found"
                )
            return leaders[0] if placement == "first_decode" else leaders[-1]
        case _:
            raise PlanningError(
                f"$.{what}.placement.node: {placement!r} is not one of head, first_decode, "
                "last_decode, dedicated"
            )


def plan_frontend_layout(
    ctx: PlanContext, routers: RouterInput, disaggregated: bool
) -> FrontendLayout:
    frontend = ctx.recipe.frontend
    if ctx.frontend == "none":
        head = ctx.carving.head
        return FrontendLayout(
            nodes=(), ports=(), nginx_node=None, public_node=head, public_port=FRONTEND_PUBLIC_PORT
        )
    if is_direct(ctx.frontend, disaggregated):
        leader = routers.agg[0].node if routers.agg else ctx.carving.head
        return FrontendLayout(
            nodes=(),
            ports=(),
            nginx_node=None,
            public_node=leader,
            public_port=FRONTEND_PUBLIC_PORT,
        )
    workers = ctx.carving.workers
    additional = frontend.num_additional_frontends
    if (
        not workers
        or (len(workers) == 1 and additional in (0, DEFAULT_ADDITIONAL_FRONTENDS))
        or not frontend.enable_multiple_frontends
        or ctx.frontend == "trtllm_serve"
    ):
        node = placed_node(ctx, frontend.placement.node, routers, "frontend")
        return FrontendLayout(
            nodes=(node,),
            ports=(FRONTEND_PUBLIC_PORT,),
            nginx_node=None,
            public_node=node,
            public_port=FRONTEND_PUBLIC_PORT,
        )
    head = ctx.carving.head
    # The worker nodes besides nginx's; on a one-node job that node itself.
    others = [node for node in workers if node != head] or list(workers)
    chosen = _frontend_nodes(additional, others)
    return FrontendLayout(
        nodes=chosen,
        ports=_frontend_ports(chosen, ctx.local),
        nginx_node=head,
        public_node=head,
        public_port=FRONTEND_PUBLIC_PORT,
    )
