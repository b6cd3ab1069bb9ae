"""What each service kind brings: default command, ports, readiness probe, phase, criticality.

Kinds (docs/planner.md#services): etcd, nats (infra phase), mooncake-master, mooncake-store,
ray, gms, lmcache-server (before workers), generic and the exporters (after the frontend).
"""

from __future__ import annotations

from typing import Literal

from srt_planner.context import PlanContext
from srt_planner.engines.failover import GMS_READY_MARKER, gms_command
from srt_planner.errors import PlanningError
from srt_planner.plan import HttpProbe, LogProbe, Readiness, TcpProbe
from srt_planner.ports import (
    ETCD_CLIENT_PORT,
    ETCD_PEER_PORT,
    MOONCAKE_HTTP_PORT,
    MOONCAKE_METRICS_PORT,
    MOONCAKE_RPC_PORT,
    NATS_PORT,
)
from srt_schema.recipe import ServiceConfig, ServiceMetricsConfig

__all__ = [
    "BEFORE_WORKERS",
    "CRITICAL",
    "EXPORTERS",
    "INFRA",
    "WORKER_PLACED",
    "kind_command",
    "kind_ports",
    "kind_readiness",
    "service_phase",
]

INFRA = frozenset({"etcd", "nats"})
BEFORE_WORKERS = frozenset({"mooncake-master", "mooncake-store", "ray", "gms", "lmcache-server"})
CRITICAL = frozenset(
    {"etcd", "nats", "mooncake-master", "mooncake-store", "ray", "gms", "lmcache-server"}
)
WORKER_PLACED = frozenset({"dcgm-exporter", "node-exporter", "mooncake-store", "lmcache-server"})
EXPORTERS = frozenset({"dcgm-exporter", "node-exporter", "process-exporter"})
LMCACHE_RPC_PORT = 8750
LMCACHE_HTTP_PORT = 8751
RAY_PORT = 6379


def kind_command(
    ctx: PlanContext, service: ServiceConfig, data: str, instance: int, first: str
) -> tuple[str, ...]:
    match service.type:
        case "lmcache-server" if service.command is None:
            return (
                "lmcache",
                "server",
                "--host",
                "0.0.0.0",
                "--port",
                str(LMCACHE_RPC_PORT),
                "--http-host",
                "0.0.0.0",
                "--http-port",
                str(LMCACHE_HTTP_PORT),
            )
        case "gms" if service.command is None:
            return gms_command(ctx.python)
        case "ray" if service.command is None:
            if instance == 0:
                return ("ray", "start", "--head", f"--port={RAY_PORT}", "--block")
            return ("ray", "start", f"--address={ctx.address(first)}:{RAY_PORT}", "--block")
        case "etcd":
            infra = ctx.address(ctx.carving.infra)
            return (
                "etcd",
                "--data-dir",
                f"{data}/etcd",
                "--listen-client-urls",
                f"http://0.0.0.0:{ETCD_CLIENT_PORT}",
                "--advertise-client-urls",
                f"http://{infra}:{ETCD_CLIENT_PORT}",
            )
        case "nats":
            return ("nats-server", "-c", f"{ctx.in_log_dir}/nats.conf")
        case "mooncake-master":
            return (
                "mooncake_master",
                f"--rpc_port={MOONCAKE_RPC_PORT}",
                "--enable_http_metadata_server=true",
                f"--http_metadata_server_port={MOONCAKE_HTTP_PORT}",
                f"--metrics_port={MOONCAKE_METRICS_PORT}",
            )
        case _:
            if service.command is None:
                raise PlanningError(
                    f"$.services[{service.name}].command: a {service.type!r} service needs a "
                    "command (built-in ones: etcd, nats, mooncake-master, lmcache-server, ray, gms)"
                )
            return service.command


def kind_ports(service: ServiceConfig) -> dict[str, int]:
    match service.type:
        case "etcd":
            return {"client": ETCD_CLIENT_PORT, "peer": ETCD_PEER_PORT}
        case "nats":
            return {"client": NATS_PORT}
        case "mooncake-master":
            return {
                "rpc": MOONCAKE_RPC_PORT,
                "http": MOONCAKE_HTTP_PORT,
                "metrics": MOONCAKE_METRICS_PORT,
            }
        case "lmcache-server":
            return {"rpc": LMCACHE_RPC_PORT, "http": LMCACHE_HTTP_PORT}
        case "ray":
            return {"gcs": RAY_PORT}
        case "dcgm-exporter" | "node-exporter" | "process-exporter":
            metrics = service.metrics
            if isinstance(metrics, ServiceMetricsConfig):
                return {"metrics": metrics.port}
            return {f"metrics_{i}": m.port for i, m in enumerate(metrics)}
        case _:
            return {}


def kind_readiness(
    ctx: PlanContext, service: ServiceConfig, node: str, ports: dict[str, int]
) -> Readiness | None:
    config = service.readiness
    host = ctx.address(node)
    infra = service.type in INFRA
    timeout = float(config.timeout_seconds if config else (300 if infra else 120))
    interval = float(config.interval_seconds if config else 2)
    if config is None and service.type == "lmcache-server":
        return HttpProbe(
            host=host,
            port=LMCACHE_HTTP_PORT,
            path="/healthcheck",
            timeout_seconds=timeout,
            interval_seconds=interval,
        )
    if config is None and service.type == "gms":
        return LogProbe(
            pattern=GMS_READY_MARKER, timeout_seconds=timeout, interval_seconds=interval
        )
    if config is None and service.type in EXPORTERS:
        return None
    if config is None:
        first = next(iter(ports.values()), None)
        if first is None:
            return None
        return TcpProbe(host=host, port=first, timeout_seconds=timeout, interval_seconds=interval)
    if config.port is not None:
        return TcpProbe(
            host=host, port=config.port, timeout_seconds=timeout, interval_seconds=interval
        )
    if config.tcp is not None:
        return TcpProbe(
            host=host, port=config.tcp.port, timeout_seconds=timeout, interval_seconds=interval
        )
    if config.http is not None:
        http = config.http
        return HttpProbe(
            host=host,
            port=http.port,
            path=http.path,
            status=http.status,
            timeout_seconds=timeout,
            interval_seconds=interval,
        )
    if config.log is not None:
        return LogProbe(
            pattern=config.log.pattern, timeout_seconds=timeout, interval_seconds=interval
        )
    return None


def service_phase(service: ServiceConfig) -> Literal["infra", "before_workers", "after_frontend"]:
    match service.start:
        case "before_workers":
            return "before_workers"
        case "after_frontend":
            return "after_frontend"
        case None:
            pass
        case other:
            raise PlanningError(
                f"$.services[{service.name}].start: {other!r} is not before_workers or "
                "after_frontend"
            )
    if service.type in INFRA:
        return "infra"
    return "before_workers" if service.type in BEFORE_WORKERS else "after_frontend"
