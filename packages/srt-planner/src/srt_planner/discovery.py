"""Dynamo discovery plane: which of etcd / NATS the job needs and the URLs processes get.

NATS only when a plane uses it (docs/planner.md, Q3): the request or event plane is ``nats``
or the recipe declares a ``nats`` service. A declared service with ``external`` replaces the
launched one and its URL is what processes are pointed at. On the local launcher a Dynamo job
needs no etcd: its processes find each other through files in the log directory
(``DYN_DISCOVERY_BACKEND=file``), and every listener stays on loopback.
"""

from __future__ import annotations

from srt_planner.context import PlanContext
from srt_planner.ports import ETCD_CLIENT_PORT, MOONCAKE_HTTP_PORT, MOONCAKE_RPC_PORT, NATS_PORT
from srt_schema.recipe import Recipe, ServiceConfig

__all__ = [
    "discovery_env",
    "etcd_url",
    "file_discovery_dir",
    "kvbm_env",
    "mooncake_env",
    "nats_url",
    "needs_etcd",
    "needs_nats",
    "otel_env",
]


def _declared(recipe: Recipe, kind: str) -> ServiceConfig | None:
    for service in recipe.services:
        if service.type == kind or (service.name == kind and service.type == "generic"):
            return service
    return None


def needs_etcd(ctx: PlanContext) -> bool:
    """etcd for a Dynamo frontend, except on the local launcher, where discovery uses files."""
    declared = _declared(ctx.recipe, "etcd")
    if declared is not None:
        return declared.enabled
    return ctx.recipe.frontend.type == "dynamo" and not ctx.local


def file_discovery_dir(ctx: PlanContext) -> str | None:
    """The shared folder Dynamo's file discovery uses on the local launcher (else None)."""
    if ctx.recipe.frontend.type != "dynamo" or needs_etcd(ctx) or not ctx.local:
        return None
    return f"{ctx.log_dir}/dynamo-discovery"


def needs_nats(recipe: Recipe) -> bool:
    declared = _declared(recipe, "nats")
    if declared is not None:
        return declared.enabled
    dynamo = recipe.dynamo
    return recipe.frontend.type == "dynamo" and "nats" in (dynamo.request_plane, dynamo.event_plane)


def etcd_url(ctx: PlanContext) -> str:
    declared = _declared(ctx.recipe, "etcd")
    if declared is not None and declared.external:
        return declared.external
    return f"http://{_infra_host(ctx)}:{ETCD_CLIENT_PORT}"


def nats_url(ctx: PlanContext) -> str:
    declared = _declared(ctx.recipe, "nats")
    if declared is not None and declared.external:
        return declared.external
    return f"nats://{_infra_host(ctx)}:{NATS_PORT}"


def _infra_host(ctx: PlanContext) -> str:
    """The infra node by name (as the reference has it; cluster hostnames resolve), except on
    the local launcher, where simulated node names do not resolve: its address (loopback)."""
    return ctx.address(ctx.carving.infra) if ctx.local else ctx.carving.infra


def discovery_env(ctx: PlanContext) -> dict[str, str]:
    env: dict[str, str] = {}
    folder = file_discovery_dir(ctx)
    if folder is not None:
        # One host: Dynamo registers through files, and every listener the request path uses
        # stays on loopback (otherwise workers advertise the host's external address).
        env["DYN_DISCOVERY_BACKEND"] = "file"
        env["DYN_FILE_KV"] = folder
        for name in ("DYN_TCP_RPC_HOST", "DYN_TCP_RESPONSE_STREAM_HOST", "DYN_EVENT_PLANE_HOST"):
            env[name] = "127.0.0.1"
    if needs_etcd(ctx):
        env["ETCD_ENDPOINTS"] = etcd_url(ctx)
    if needs_nats(ctx.recipe):
        env["NATS_SERVER"] = nats_url(ctx)
    return env


def mooncake_env(ctx: PlanContext, node: str, role_env: dict[str, str]) -> dict[str, str]:
    """Mooncake variables for workers when the job has a Mooncake master
    (docs/planner.md#worker-environment layer 7)."""
    declared = _declared(ctx.recipe, "mooncake-master")
    if declared is None or not declared.enabled:
        return {}
    if declared.external:
        master = declared.external
        host = master.rsplit(":", 1)[0]
    else:
        host = ctx.address(ctx.carving.infra)
        master = f"{host}:{MOONCAKE_RPC_PORT}"
    return {
        "MOONCAKE_LOCAL_HOSTNAME": role_env.get("MOONCAKE_LOCAL_HOSTNAME", ctx.address(node)),
        "MOONCAKE_MASTER": master,
        "MOONCAKE_TE_META_DATA_SERVER": f"http://{host}:{MOONCAKE_HTTP_PORT}/metadata",
    }


def kvbm_env(
    leader_address: str, multi_node: bool, port: int | None, role_env: dict[str, str]
) -> dict[str, str]:
    """KVBM leader variables when ``DYN_CONNECTOR=kvbm`` (docs/planner.md#worker-environment layer
    9, set-if-absent)."""
    if role_env.get("DYN_CONNECTOR") != "kvbm" or port is None:
        return {}
    env = {
        "DYN_KVBM_LEADER_ZMQ_PUB_PORT": str(port),
        "DYN_KVBM_LEADER_ZMQ_ACK_PORT": str(port + 1),
    }
    if multi_node:
        env["DYN_KVBM_LEADER_ZMQ_HOST"] = leader_address
    return {k: v for k, v in env.items() if k not in role_env}


def otel_env(ctx: PlanContext, service_name: str) -> dict[str, str]:
    observability = ctx.recipe.observability
    if not (observability.enable_otel and observability.otel_endpoint):
        return {}
    return {
        "OTEL_EXPORT_ENABLED": "true",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": observability.otel_endpoint,
        "OTEL_EXPORTER_OTLP_ENDPOINT": observability.otel_endpoint,
        "OTEL_SERVICE_NAME": service_name,
    }
