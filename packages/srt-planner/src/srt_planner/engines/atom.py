"""ATOM worker command (docs/planner.md#atom-and-tilert)."""

from __future__ import annotations

from typing import Any

import msgspec

from srt_planner.engines._flags import flags_from_args
from srt_planner.engines.base import EngineCommand, WorkerRequest, role_args
from srt_planner.errors import PlanningError
from srt_schema.recipe import AtomBackend

__all__ = ["build_atom"]

_RESERVED = ("model", "host", "server-port", "tp", "tensor-parallel-size", "kv-transfer-config")


def build_atom(engine: AtomBackend, request: WorkerRequest) -> EngineCommand:
    ctx, proc, role = request.ctx, request.process, request.role
    if len(request.siblings) > 1:
        raise PlanningError(
            f"$.roles.{role.name}.gpus: an ATOM worker must fit one node "
            f"({ctx.gpus_per_node} GPUs) but needs {role.gpus_per_worker}"
        )
    args = role_args(role)
    for key in args:
        if key.replace("_", "-") in _RESERVED:
            raise PlanningError(
                f"$.roles.{role.name}.args.{key}: srt sets this ATOM flag itself; remove it"
            )
    argv = ["env", f"ATOM_HOST_IP={ctx.address(proc.node)}"]
    argv += [ctx.python, "-m", "atom.entrypoints.openai_server", "--model", ctx.model_arg]
    argv += ["--host", "0.0.0.0", "--server-port", str(proc.ports.get("http", 0))]
    argv += ["-tp", str(len(proc.gpus))]
    # The deployment's one name (srt_schema.served), also on roles that did not spell it.
    argv += ["--served-model-name", ctx.served_model_name]
    if request.disaggregated:
        transfer: dict[str, Any] = {
            "kv_role": "kv_producer" if role.name == "prefill" else "kv_consumer",
            "kv_connector": engine.connector,
            "proxy_ip": ctx.address(ctx.carving.head),
            "handshake_port": proc.ports["nixl"],
        }
        if engine.mooncake_protocol is not None:
            transfer["protocol"] = engine.mooncake_protocol
        argv += ["--kv-transfer-config", msgspec.json.encode(transfer).decode()]
    argv += flags_from_args(args, skip=("served-model-name",), dashes=False)
    return EngineCommand(argv=tuple(argv))
