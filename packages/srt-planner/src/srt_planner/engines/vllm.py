"""vLLM worker command (docs/planner.md#vllm): Dynamo, direct ``vllm serve``, router."""

from __future__ import annotations

import json
from typing import Any

from srt_planner._recipe import Engine, capabilities, dp_launch_mode_of
from srt_planner.engines._flags import flags_from_args
from srt_planner.engines.base import (
    EngineCommand,
    WorkerRequest,
    config_dump_path,
    kv_events_config,
    role_args,
)
from srt_planner.engines.failover import failover_env, worker_dir
from srt_planner.engines.sidecar import coupled_launch, sidecar_argv, sidecar_mode
from srt_planner.flag_versions import pinned_version, version_key
from srt_schema.recipe import VLLMBackend

__all__ = [
    "build_vllm",
    "connector_config",
    "data_parallel",
    "replica_size",
]

_CONNECTORS: dict[str, dict[str, str]] = {
    "nixl": {"kv_connector": "NixlConnector", "kv_role": "kv_both"},
    "lmcache": {"kv_connector": "LMCacheConnectorV1", "kv_role": "kv_both"},
    "lmcache-mp": {"kv_connector": "LMCacheMPConnector", "kv_role": "kv_both"},
    "kvbm": {
        "kv_connector": "DynamoConnector",
        "kv_connector_module_path": "kvbm.vllm_integration.connector",
        "kv_role": "kv_both",
    },
    "moriio": {"kv_connector": "MoRIIOConnector", "kv_role": "kv_both"},
}
#: Flags srt owns on the vLLM command line; a recipe's copies are dropped.
_OWNED = (
    "connector",
    "data-parallel-size-local",
    "data-parallel-start-rank",
    "data-parallel-hybrid-lb",
    "headless",
    "host",
    "port",
    "master-addr",
    "nnodes",
    "node-rank",
    "served-model-name",
)
#: Sidecar mode also owns the native server's gRPC port.
_OWNED_SIDECAR = (*_OWNED, "grpc-port")
#: The native server's Rust frontend serves the gRPC API the Dynamo vLLM sidecar speaks.
_RUST_FRONTEND = "VLLM_USE_RUST_FRONTEND"
#: The first vLLM with ``--device-ids`` (its flag catalogs; tests/test_flag_check_argv.py holds
#: this to them). A worker of an older pinned vLLM gets the CUDA_VISIBLE_DEVICES mask instead.
DEVICE_IDS_SINCE = "0.24.0"


def _arg(args: dict[str, Any], name: str) -> Any:
    return args.get(name, args.get(name.replace("-", "_")))


def served_names(args: dict[str, Any], name: str) -> list[str]:
    """``--served-model-name`` values: the deployment's name first, then a role's extra names
    (vLLM serves every name it is given; clients use the first)."""
    given = _arg(args, "served-model-name")
    extra = [str(v) for v in given[1:]] if isinstance(given, list) else []
    return [name, *(v for v in extra if v != name)]


def replica_size(args: dict[str, Any]) -> int:
    tp = int(_arg(args, "tensor-parallel-size") or 1)
    pp = int(_arg(args, "pipeline-parallel-size") or 1)
    return tp * pp


def every_process_registers(engine: Engine, args: dict[str, Any], process_gpus: int) -> bool:
    """vLLM data parallelism behind Dynamo: every process of a worker registers its own Dynamo
    instance (a per-GPU launch, or data-parallel replicas that fit one process), so the health
    gate counts processes, not workers (docs/planner.md#health-gate)."""
    if not capabilities(engine).data_parallel or data_parallel(args) <= 1:
        return False
    return dp_launch_mode_of(engine) == "per_gpu" or replica_size(args) <= process_gpus


def data_parallel(args: dict[str, Any]) -> int:
    return int(_arg(args, "data-parallel-size") or 1)


def connector_config(engine: VLLMBackend, args: dict[str, Any]) -> str | None:
    """The ``--kv-transfer-config`` JSON: role ``connector`` > engine ``connector``."""
    name = _arg(args, "connector")
    if name is None:
        name = engine.connector
    if name is None or str(name) in ("none", "null"):
        return None
    known = _CONNECTORS.get(str(name))
    if known is None:
        return str(name)
    return json.dumps(known)


def _device_ids(request: WorkerRequest) -> bool:
    """Whether the worker's vLLM takes ``--device-ids``: from :data:`DEVICE_IDS_SINCE` on, and
    when the version is not pinned (the image's tag or ``container_versions``; the newest
    vLLM has it)."""
    ctx = request.ctx
    image = request.role.config.container or ctx.recipe.model.container
    version = pinned_version("vllm", image, ctx.cluster)
    return version is None or version_key(version) >= version_key(DEVICE_IDS_SINCE)


def build_vllm(engine: VLLMBackend, request: WorkerRequest) -> EngineCommand:
    ctx, proc, role = request.ctx, request.process, request.role
    args = role_args(role)
    served = served_names(args, ctx.served_model_name)
    multi = len(request.siblings) > 1
    leader_ip = ctx.address(request.leader.node)
    argv: list[str]
    sidecar = ctx.dynamo_workers and sidecar_mode(ctx.recipe)
    if ctx.frontend == "vllm":
        argv = [engine.vllm_serve_binary, "serve", ctx.model_arg]
        if proc.is_leader:
            argv += ["--host", "0.0.0.0", "--port", str(proc.ports["public"])]
        argv += ["--served-model-name", *served]
    elif sidecar:
        # vLLM's native gRPC listener is its Rust frontend (``vllm-rs serve <model> --host
        # 127.0.0.1 --grpc-port <port>``; docs/planner.md#vllm says where this comes from).
        # ``vllm serve`` with VLLM_USE_RUST_FRONTEND=1 runs that frontend from the installed
        # vllm package, so it need not be on PATH. Only the leader serves (HTTP and gRPC on
        # loopback); followers are --headless.
        argv = [ctx.python, "-m", "vllm.entrypoints.cli.main", "serve", ctx.model_arg]
        argv += ["--served-model-name", *served]
        if "sidecar_grpc" in proc.ports:
            argv += ["--host", "127.0.0.1", "--port", str(proc.ports["http"])]
            argv += ["--grpc-port", str(proc.ports["sidecar_grpc"])]
    elif ctx.dynamo_workers:
        argv = [ctx.python, "-m", "dynamo.vllm", "--model", ctx.model_arg]
        argv += ["--served-model-name", *served]
    else:
        argv = ["vllm", "serve", ctx.model_arg, "--served-model-name", *served]
        argv += ["--host", "0.0.0.0", "--port", str(proc.ports.get("http", 0))]
    if request.disaggregated and ctx.dynamo_workers and not sidecar:
        argv += ["--disaggregation-mode", role.name]
    transfer = (
        connector_config(engine, args) if request.disaggregated or ctx.dynamo_workers else None
    )
    if transfer is not None:
        argv += ["--kv-transfer-config", transfer]
    failover = engine.failover
    # Failover engines and the gms service must agree on "device k": all of them get the mask.
    # So does a native sidecar engine (docs/planner.md#worker-environment).
    # A pinned vLLM older than --device-ids gets the mask too (docs/flag-check.md).
    mask = engine.set_visible_devices or failover is not None or sidecar or not _device_ids(request)
    if not mask:
        argv += ["--device-ids", ",".join(str(g) for g in proc.gpus)]
    dp = data_parallel(args)
    replica = replica_size(args)
    owned: tuple[str, ...] = _OWNED_SIDECAR if sidecar else _OWNED
    if dp > 1 and engine.dp_launch_mode == "per_node" and replica <= len(proc.gpus):
        owned = (*_OWNED, "data-parallel-address", "data-parallel-rpc-port")
        local = len(proc.gpus) // replica
        start = sum(len(p.gpus) // replica for p in request.siblings[: proc.node_rank])
        argv += ["--data-parallel-size-local", str(local), "--data-parallel-start-rank", str(start)]
        argv += ["--data-parallel-address", leader_ip]
        argv += ["--data-parallel-rpc-port", str(request.leader.ports["dp_rpc"])]
        argv.append("--data-parallel-hybrid-lb")
    elif multi:
        argv += ["--master-addr", leader_ip, "--nnodes", str(len(request.siblings))]
        argv += ["--node-rank", str(proc.node_rank)]
        if failover is not None:
            owned = (*owned, "master-port")
            argv += ["--master-port", str(request.leader.ports["master_port"])]
        if not proc.is_leader:
            argv.append("--headless")
    if failover is not None:
        owned = (*owned, "load-format")
        argv += ["--load-format", "gms", "--gms-shadow-mode"]
    if ctx.dynamo_workers and not sidecar:
        # dynamo.vllm's own flags; in sidecar mode the sidecar reads DYN_REQUEST_PLANE.
        argv += ["--request-plane", ctx.recipe.dynamo.request_plane]
        argv += ["--dump-config-to", config_dump_path(request)]
    events = kv_events_config(role, proc.ports["kv_events"], vllm=True)
    if events is not None:
        argv += ["--kv-events-config", events]
    argv += flags_from_args(args, skip=owned)
    env = {
        "DYN_VLLM_KV_EVENT_PORT": str(proc.ports["kv_events"]),
        "VLLM_NIXL_SIDE_CHANNEL_PORT": str(proc.ports["nixl"]),
        "VLLM_NIXL_SIDE_CHANNEL_HOST": ctx.address(proc.node),
        "VLLM_PORT": str(proc.ports["vllm_port"]),
    }
    if failover is not None:
        directory = worker_dir(failover, ctx.job_id, role.name, proc.endpoint.index)
        env.update(failover_env(directory, proc.engine))
    unset = ("VLLM_PORT",) if multi else ()
    if not sidecar:
        return EngineCommand(argv=tuple(argv), env=env, wants_mask=mask, env_unset=unset)
    env.update(_sidecar_env(request))
    if "sidecar_grpc" not in proc.ports:
        # Followers are engine-only ranks: the leader's sidecar registers the whole endpoint.
        return EngineCommand(argv=tuple(argv), env=env, wants_mask=mask, env_unset=unset)
    port = proc.ports["sidecar_grpc"]
    # The native server does not report its disaggregation role, so the sidecar is told
    # (``--disaggregation-mode prefill|decode``, docs/planner.md#vllm).
    role_flags = ("--disaggregation-mode", role.name) if request.disaggregated else ()
    launch = coupled_launch(
        argv,
        sidecar_argv(ctx.recipe, ctx.python, "vllm", port, role_flags),
        grpc_port=port,
        startup_timeout=ctx.recipe.dynamo.sidecar_startup_timeout,
    )
    return EngineCommand(argv=launch, env=env, wants_mask=mask, env_unset=unset)


def _sidecar_env(request: WorkerRequest) -> dict[str, str]:
    """Engine defaults of a native sidecar engine that the role's ``env`` or the recipe's
    ``environment`` may override: the Rust (gRPC) frontend on, and no vLLM plugins
    (``VLLM_PLUGINS=""``: an image's plugins could change the engine's output types under the
    sidecar's fixed protocol; docs/planner.md#worker-environment)."""
    given = {**request.role.config.env, **request.ctx.recipe.environment}
    defaults = {_RUST_FRONTEND: "1", "VLLM_PLUGINS": ""}
    return {key: value for key, value in defaults.items() if key not in given}
