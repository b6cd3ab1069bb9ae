"""Endpoint allocation: which GPUs of which nodes each worker gets (docs/planner.md#gpu-packing).

One cursor ``(node, offset)`` walks the worker nodes: prefill endpoints, then decode, then agg.
Unlike the reference, every layout is checked before it is returned (Q7): a worker with no GPU
(more workers than the role's GPUs), a worker that runs off the end of the node list or a GPU
handed out twice is a ``PlanningError`` naming the role.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from srt_planner._recipe import RoleName
from srt_planner.errors import PlanningError
from srt_planner.hostlist import compress_hostlist

__all__ = ["Endpoint", "RoleLayout", "check_worker_gpus", "pack_endpoints"]


class RoleLayout(msgspec.Struct, frozen=True, kw_only=True):
    """What the packer needs to know about one role."""

    role: RoleName
    workers: int
    gpus_per_worker: int
    #: TRT-LLM: an MPI endpoint may take GPUs from several partly used nodes.
    packed: bool = False
    colocate: bool = False
    het_group: int | None = None


class Endpoint(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One logical worker: its nodes (leader first) and the GPUs it owns on each."""

    role: RoleName
    index: int
    nodes: tuple[str, ...]
    gpus: tuple[tuple[int, ...], ...]
    het_group: int | None = None

    @property
    def leader(self) -> str:
        return self.nodes[0]


class _Cursor:
    def __init__(self, nodes: Sequence[str], gpn: int) -> None:
        self.nodes = nodes
        self.gpn = gpn
        self.index = 0
        self.offset = 0

    def advance(self) -> None:
        self.index += 1
        self.offset = 0


def _out_of_nodes(layout: RoleLayout, worker: int, nodes: Sequence[str], gpn: int) -> PlanningError:
    role = layout.role
    listed = compress_hostlist(list(nodes)) if nodes else "none"
    return PlanningError(
        f"$.roles.{role}: {role} worker {worker} needs {layout.gpus_per_worker} GPU(s) but the "
        f"{len(nodes)} "
        f"worker node(s) x {gpn} GPUs ({listed}) are used up by the workers before it; "
        f"raise roles.{role}.nodes or lower roles.{role}.workers / roles.{role}.gpus"
    )


def check_worker_gpus(layout: RoleLayout, gpn: int) -> None:
    """Every worker of the role needs at least one GPU (else it would get no node at all)."""
    if layout.workers < 1 or layout.gpus_per_worker >= 1:
        return
    role = layout.role
    raise PlanningError(
        f"$.roles.{role}: {layout.workers} {role} worker(s) get {layout.gpus_per_worker} GPU(s) "
        f"each (roles.{role}.gpus, else the role's nodes x {gpn} GPUs per node // its workers); "
        f"every worker needs at least one GPU: lower roles.{role}.workers, raise "
        f"roles.{role}.nodes, or set roles.{role}.gpus"
    )


def _take_simple(
    cursor: _Cursor, layout: RoleLayout, worker: int, spread: bool
) -> tuple[tuple[str, ...], tuple[tuple[int, ...], ...]]:
    gpn, need = cursor.gpn, layout.gpus_per_worker
    if need >= gpn:
        span = -(-need // gpn)
        if cursor.index + span > len(cursor.nodes):
            raise _out_of_nodes(layout, worker, cursor.nodes, gpn)
        nodes = tuple(cursor.nodes[cursor.index : cursor.index + span])
        cursor.index += span
        cursor.offset = 0
        return nodes, tuple(tuple(range(gpn)) for _ in nodes)
    if cursor.offset + need > gpn:
        cursor.advance()
    if cursor.index >= len(cursor.nodes):
        raise _out_of_nodes(layout, worker, cursor.nodes, gpn)
    node = cursor.nodes[cursor.index]
    gpus = tuple(range(cursor.offset, cursor.offset + need))
    cursor.offset += need
    if cursor.offset >= gpn or spread:
        cursor.advance()
    return (node,), (gpus,)


def _take_packed(
    cursor: _Cursor, layout: RoleLayout, worker: int, spread: bool
) -> tuple[tuple[str, ...], tuple[tuple[int, ...], ...]]:
    gpn, need = cursor.gpn, layout.gpus_per_worker
    if need <= gpn and cursor.offset + need > gpn:
        cursor.advance()
    pieces: list[tuple[str, tuple[int, ...]]] = []
    remaining = need
    while remaining > 0:
        if cursor.index >= len(cursor.nodes):
            raise _out_of_nodes(layout, worker, cursor.nodes, gpn)
        take = min(remaining, gpn - cursor.offset)
        node = cursor.nodes[cursor.index]
        pieces.append((node, tuple(range(cursor.offset, cursor.offset + take))))
        cursor.offset += take
        remaining -= take
        if cursor.offset >= gpn:
            cursor.advance()
    if spread and cursor.offset:
        cursor.advance()
    # Full nodes lead the MPI rank order (stable for equal sizes).
    pieces.sort(key=lambda piece: -len(piece[1]))
    return tuple(p[0] for p in pieces), tuple(p[1] for p in pieces)


def _check_disjoint(endpoints: Sequence[Endpoint], gpn: int) -> None:
    owner: dict[tuple[str, int], Endpoint] = {}
    for endpoint in endpoints:
        for node, gpus in zip(endpoint.nodes, endpoint.gpus, strict=True):
            for gpu in gpus:
                if gpu >= gpn:
                    raise PlanningError(
                        f"$.roles.{endpoint.role}: {endpoint.role} worker {endpoint.index} "
                        f"needs GPU {gpu} on {node} "
                        f"but nodes have {gpn} GPUs"
                    )
                other = owner.get((node, gpu))
                if other is not None:
                    raise PlanningError(
                        f"$.roles.{endpoint.role}: {endpoint.role} worker {endpoint.index} "
                        f"does not fit: GPU {gpu} of "
                        f"{node} already belongs to {other.role} worker {other.index}; "
                        f"colocated roles must fit in the GPUs the earlier roles leave free "
                        f"(check roles.{endpoint.role}.gpus and roles.{endpoint.role}.workers)"
                    )
                owner[(node, gpu)] = endpoint


def pack_endpoints(
    layouts: Sequence[RoleLayout],
    nodes: Sequence[str],
    gpus_per_node: int,
    *,
    spread_workers: bool = False,
    separate_prefill_decode: bool = True,
) -> tuple[Endpoint, ...]:
    """Place every worker of ``layouts`` (in order) on ``nodes``; validated, never overlapping."""
    cursor = _Cursor(nodes, gpus_per_node)
    endpoints: list[Endpoint] = []
    previous: RoleName | None = None
    for layout in layouts:
        check_worker_gpus(layout, gpus_per_node)
        if (
            previous == "prefill"
            and layout.role == "decode"
            and separate_prefill_decode
            and not layout.colocate
            and cursor.offset > 0
            and cursor.index + 1 < len(nodes)
        ):
            cursor.advance()
        for worker in range(layout.workers):
            take = _take_packed if layout.packed else _take_simple
            placed, gpus = take(cursor, layout, worker, spread_workers)
            endpoints.append(
                Endpoint(
                    role=layout.role,
                    index=worker,
                    nodes=placed,
                    gpus=gpus,
                    het_group=layout.het_group,
                )
            )
        previous = layout.role
    _check_disjoint(endpoints, gpus_per_node)
    return tuple(endpoints)
