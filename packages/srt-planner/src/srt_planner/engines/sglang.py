"""SGLang worker command (docs/planner.md#sglang)."""

from __future__ import annotations

from srt_planner.engines._flags import flags_from_args
from srt_planner.engines.base import (
    EngineCommand,
    WorkerRequest,
    config_dump_path,
    kv_events_config,
    role_args,
)
from srt_planner.engines.sidecar import coupled_launch, sidecar_argv, sidecar_mode
from srt_schema.recipe import SGLangBackend

__all__ = ["build_sglang"]

_OWNED = ("model-path", "served-model-name", "nccl-port")
#: Sidecar mode also owns the engine's gRPC port.
_OWNED_SIDECAR = (*_OWNED, "grpc-port")


def build_sglang(engine: SGLangBackend, request: WorkerRequest) -> EngineCommand:
    del engine  # no engine-wide knobs change the command line
    ctx, proc, role = request.ctx, request.process, request.role
    sidecar = ctx.dynamo_workers and sidecar_mode(ctx.recipe)
    # Sidecar mode runs the native server; the Dynamo sidecar next to it does the registering.
    dynamo_module = ctx.dynamo_workers and not sidecar
    module = "dynamo.sglang" if dynamo_module else "sglang.launch_server"
    http = proc.ports.get("http", 0)
    if ctx.frontend == "sglang" and role.name == "agg" and proc.is_leader:
        http = proc.ports["public"]
    argv = [ctx.python, "-m", module, "--model-path", ctx.model_arg]
    argv += ["--served-model-name", ctx.served_model_name, "--host", "0.0.0.0"]
    argv += ["--port", str(http), "--nccl-port", str(proc.ports["nccl"])]
    if request.disaggregated:
        argv += ["--disaggregation-mode", role.name]
    if "bootstrap" in proc.ports:
        argv += ["--disaggregation-bootstrap-port", str(proc.ports["bootstrap"])]
    if len(request.siblings) > 1:
        leader = request.leader
        address = ctx.address(leader.node)
        argv += ["--dist-init-addr", f"{address}:{leader.ports['dist_init']}"]
        argv += ["--nnodes", str(len(request.siblings)), "--node-rank", str(proc.node_rank)]
    if dynamo_module:
        # a dynamo.sglang flag: SGLang's own server (sidecar mode) has no such flag
        argv += ["--dump-config-to", config_dump_path(request)]
    events = kv_events_config(role, proc.ports["kv_events"])
    if events is not None:
        argv += ["--kv-events-config", events]
    if dynamo_module:
        argv += ["--request-plane", ctx.recipe.dynamo.request_plane]
    if not _given(request, "enable-metrics"):
        argv.append("--enable-metrics")
    if sidecar:
        if "sidecar_grpc" in proc.ports:
            argv += ["--grpc-port", str(proc.ports["sidecar_grpc"])]
        if not _given(request, "incremental-streaming-output"):
            argv.append("--incremental-streaming-output")
    argv += flags_from_args(role_args(role), skip=_OWNED_SIDECAR if sidecar else _OWNED)
    env: dict[str, str] = {
        "SGLANG_CUDA_COREDUMP_BEFORE_CRASH": "0",
        "SGLANG_PYSPY_DUMP_BEFORE_CRASH": "0",
    }
    if not sidecar:
        return EngineCommand(argv=tuple(argv), env=env)
    env["SGLANG_RUST_BUILD_MODE"] = "never"
    if "sidecar_grpc" not in proc.ports:
        # Followers are engine-only ranks: the leader's sidecar registers the whole endpoint.
        return EngineCommand(argv=tuple(argv), env=env)
    port = proc.ports["sidecar_grpc"]
    launch = coupled_launch(
        argv,
        sidecar_argv(ctx.recipe, ctx.python, "sglang", port),
        grpc_port=port,
        startup_timeout=ctx.recipe.dynamo.sidecar_startup_timeout,
    )
    return EngineCommand(argv=launch, env=env)


def _given(request: WorkerRequest, flag: str) -> bool:
    """The role's ``args`` set ``flag`` (either spelling), so srt does not add its default."""
    args = request.role.config.args
    return flag in args or flag.replace("-", "_") in args
