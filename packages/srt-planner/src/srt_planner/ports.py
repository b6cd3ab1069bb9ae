"""Port plan: per-kind allocators (docs/planner.md#ports).

Every port is handed out once by the allocator of its kind; nothing derives one port from another.
Kinds with a per-node scope restart on every node. On the local launcher every "node" of the plan
is this one host, so per-node scopes collapse into one job-wide counter: two processes of
different plan nodes then never share a port (and the nginx fan-out frontends take
``8180 + i``). ``check_port_conflicts`` proves the result per physical host.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import msgspec

from srt_planner.errors import PlanningError

__all__ = [
    "ETCD_CLIENT_PORT",
    "ETCD_PEER_PORT",
    "FRONTEND_INTERNAL_PORT",
    "FRONTEND_PUBLIC_PORT",
    "MOONCAKE_HTTP_PORT",
    "MOONCAKE_METRICS_PORT",
    "MOONCAKE_RPC_PORT",
    "NATS_PORT",
    "PORT_KINDS",
    "PortAllocator",
    "PortKind",
    "check_port_conflicts",
]

FRONTEND_PUBLIC_PORT = 8000
FRONTEND_INTERNAL_PORT = 8180
ETCD_CLIENT_PORT = 2379
ETCD_PEER_PORT = 2380
NATS_PORT = 4222
MOONCAKE_RPC_PORT = 8700
MOONCAKE_HTTP_PORT = 8701
MOONCAKE_METRICS_PORT = 8702

PortKind = Literal[
    "sys",
    "http",
    "bootstrap",
    "kv_events",
    "nixl",
    "dp_rpc",
    "kvbm_zmq",
    "sidecar_grpc",
    "nccl",
    "dist_init",
    "vllm_port",
    "trtllm_dist_init",
]


class _KindSpec(msgspec.Struct, frozen=True):
    base: int
    stride: int
    per_node: bool
    #: Ports in the kind's range; job-wide counters wrap inside it, per-node ones are exhausted.
    span: int


#: Bases and strides follow the reference (docs/planner.md#ports). Each kind owns ``[base, base +
#: span)`` so two kinds never meet: job-wide counters (sys, kv_events, nixl, ...) wrap around inside
#: their range on jobs with more processes than the range holds (the reference's counters ran into
#: the next kind's ports there, e.g. the 201st kv-events port is the first nixl port). Processes
#: sharing a node sit next to each other in the allocation order, so a wrapped counter does not meet
#: itself on one node; ``check_port_conflicts`` proves it for every plan.
PORT_KINDS: dict[PortKind, _KindSpec] = {
    "kv_events": _KindSpec(5200, 1, False, 200),
    "nixl": _KindSpec(5400, 1, False, 200),
    "kvbm_zmq": _KindSpec(5600, 2, False, 500),
    "http": _KindSpec(6100, 32, True, 1100),
    "bootstrap": _KindSpec(7200, 1, True, 100),
    "sys": _KindSpec(7500, 1, False, 800),
    "dist_init": _KindSpec(8300, 1, True, 100),
    "dp_rpc": _KindSpec(8400, 1, True, 100),
    "nccl": _KindSpec(17500, 1, False, 2500),
    "vllm_port": _KindSpec(20000, 50, False, 9500),
    "trtllm_dist_init": _KindSpec(29500, 1, False, 500),
    "sidecar_grpc": _KindSpec(50051, 1, False, 1000),
}


class PortAllocator:
    """Hands out ports kind by kind; ``single_host`` collapses per-node scopes (local launcher)."""

    def __init__(self, *, single_host: bool = False, sidecar_base: int | None = None) -> None:
        self._single_host = single_host
        self._next: dict[tuple[PortKind, str], int] = {}
        self._sidecar_base = sidecar_base

    @property
    def single_host(self) -> bool:
        """Every node of the plan is one host (the local launcher)."""
        return self._single_host

    def take(self, kind: PortKind, node: str, count: int = 1) -> int:
        """The first of ``count`` consecutive ports (in stride units) of ``kind`` on ``node``."""
        spec = PORT_KINDS[kind]
        base = self._sidecar_base if kind == "sidecar_grpc" and self._sidecar_base else spec.base
        per_node = spec.per_node and not self._single_host
        key = (kind, node if per_node else "")
        offset = self._next.get(key, 0)
        width = spec.stride * count
        if offset + width > spec.span:
            if per_node or width > spec.span:
                where = f"on {node}" if per_node else "in the job"
                raise PlanningError(
                    f"port range exhausted: {kind} ports {base}-{base + spec.span - 1} are all "
                    f"taken {where}; put fewer workers on one node"
                )
            offset = 0
        self._next[key] = offset + width
        port = base + offset
        if port + width - spec.stride > 65535:
            raise PlanningError(f"port range exhausted: {kind} port {port} is above 65535")
        return port


def check_port_conflicts(bindings: Iterable[tuple[str, str, str, int]]) -> None:
    """Fail if two processes bind one port on one host; items are (host, process, name, port)."""
    seen: dict[tuple[str, int], tuple[str, str]] = {}
    for host, process, name, port in bindings:
        if port <= 0:
            continue
        other = seen.get((host, port))
        if other is not None and other[0] != process:
            raise PlanningError(
                f"port {port} on {host} is bound twice: {other[0]} ({other[1]}) and "
                f"{process} ({name}); change one of them"
            )
        seen[(host, port)] = (process, name)
