"""Port plan: per-kind allocators (planner-and-runtime.md §1.6).

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


PORT_KINDS: dict[PortKind, _KindSpec] = {
    "sys": _KindSpec(7500, 1, False),
    "http": _KindSpec(6100, 32, True),
    "bootstrap": _KindSpec(7200, 1, True),
    "kv_events": _KindSpec(5200, 1, False),
    "nixl": _KindSpec(5400, 1, False),
    "dp_rpc": _KindSpec(8400, 1, True),
    "kvbm_zmq": _KindSpec(5600, 2, False),
    "sidecar_grpc": _KindSpec(50051, 1, False),
    "nccl": _KindSpec(17500, 1, False),
    "dist_init": _KindSpec(8300, 1, True),
    "vllm_port": _KindSpec(20000, 50, False),
    "trtllm_dist_init": _KindSpec(29500, 1, False),
}


class PortAllocator:
    """Hands out ports kind by kind; ``single_host`` collapses per-node scopes (local launcher)."""

    def __init__(self, *, single_host: bool = False, sidecar_base: int | None = None) -> None:
        self._single_host = single_host
        self._next: dict[tuple[PortKind, str], int] = {}
        self._sidecar_base = sidecar_base

    def take(self, kind: PortKind, node: str, count: int = 1) -> int:
        """The first of ``count`` consecutive ports (in stride units) of ``kind`` on ``node``."""
        spec = PORT_KINDS[kind]
        base = self._sidecar_base if kind == "sidecar_grpc" and self._sidecar_base else spec.base
        scope = node if spec.per_node and not self._single_host else ""
        key = (kind, scope)
        port = self._next.get(key, base)
        end = port + spec.stride * count
        if end - spec.stride > 65535:
            raise PlanningError(
                f"port range exhausted: {kind} ports from {base} passed 65535 on "
                f"{node if scope else 'the job'}; fewer workers per node or fewer processes"
            )
        self._next[key] = end
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
