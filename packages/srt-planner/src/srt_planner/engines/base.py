"""What an engine builder gets (one worker process) and returns (its command and env)."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from srt_planner._recipe import ResolvedRole
from srt_planner.context import PlanContext
from srt_planner.gpu_packing import Endpoint
from srt_planner.plan import GeneratedFile

__all__ = [
    "EngineCommand",
    "WorkerProcess",
    "WorkerRequest",
    "config_dump_path",
    "kv_events_config",
    "role_args",
]


class WorkerProcess(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One process of an endpoint: its node, rank within the endpoint, GPUs and ports."""

    endpoint: Endpoint
    node: str
    node_rank: int
    gpus: tuple[int, ...]
    ports: dict[str, int]
    #: Ports of the endpoint (bootstrap, DP rpc...) that only the leader binds; followers use them.
    shared: tuple[str, ...] = ()
    #: 0 for the serving engine, k >= 1 for vLLM shadow engine k on the same GPUs (failover).
    engine: int = 0

    @property
    def bound_ports(self) -> dict[str, int]:
        """The ports this process itself listens on."""
        if self.is_leader:
            return dict(self.ports)
        return {k: v for k, v in self.ports.items() if k not in self.shared}

    @property
    def is_leader(self) -> bool:
        return self.node_rank == 0


class WorkerRequest(msgspec.Struct, frozen=True, kw_only=True):
    """Everything an engine builder reads."""

    ctx: PlanContext
    role: ResolvedRole
    process: WorkerProcess
    #: Every process of the endpoint, leader first (multi-node flags need the leader's ports).
    siblings: tuple[WorkerProcess, ...]

    @property
    def leader(self) -> WorkerProcess:
        return self.siblings[0]

    @property
    def disaggregated(self) -> bool:
        return self.role.name != "agg"


class EngineCommand(msgspec.Struct, frozen=True, kw_only=True):
    """The engine's argv plus the env and files it needs."""

    argv: tuple[str, ...]
    env: dict[str, str] = {}
    files: tuple[GeneratedFile, ...] = ()
    #: Whether a partial-node process gets the visible-devices mask (vLLM uses --device-ids).
    wants_mask: bool = True
    fatal_log_patterns: tuple[str, ...] = ()
    env_unset: tuple[str, ...] = ()


def config_dump_path(request: WorkerRequest) -> str:
    """Where a worker process dumps its engine config: named like its log
    (``<node>_<role>_w<i>``), so two workers on one node never write the same file."""
    proc = request.process
    suffix = f"_e{proc.engine}" if proc.engine else ""
    name = f"{proc.node}_{proc.endpoint.role}_w{proc.endpoint.index}_config{suffix}.json"
    return f"{request.ctx.in_log_dir}/{name}"


def role_args(role: ResolvedRole) -> dict[str, Any]:
    return dict(role.config.args)


def kv_events_config(role: ResolvedRole, port: int, *, vllm: bool = False) -> str | None:
    """``--kv-events-config`` JSON when the role publishes KV events, else None."""
    value = role.config.kv_events
    if value is None or value is False:
        return None
    config: dict[str, Any] = {"publisher": "zmq", "topic": "kv-events"}
    if isinstance(value, dict):
        config.update(value)
    if vllm:
        config["enable_kv_cache_events"] = True
    config["endpoint"] = f"tcp://*:{port}"
    return json.dumps(config)
