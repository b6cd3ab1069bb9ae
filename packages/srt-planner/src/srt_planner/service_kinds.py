"""What each service kind brings: default command, ports, readiness probe, phase, criticality.

Placement, phase, criticality, ports and the default probe are rows of
``srt_schema.registry.SERVICE_KINDS``, the table the validator reads; this module only turns a
row into plan values (and holds the built-in commands).

Kinds (docs/planner.md#services): etcd, nats (infra phase), mooncake-master, mooncake-store,
ray, gms, lmcache-server (before workers), generic and the exporters (after the frontend).
"""

from __future__ import annotations

from typing import assert_never

from srt_planner.context import PlanContext
from srt_planner.engines.failover import GMS_READY_MARKER, gms_command
from srt_planner.errors import PlanningError
from srt_planner.plan import HttpProbe, LogProbe, Readiness, TcpProbe
from srt_planner.ports import (
    ETCD_CLIENT_PORT,
    MOONCAKE_HTTP_PORT,
    MOONCAKE_METRICS_PORT,
    MOONCAKE_RPC_PORT,
)
from srt_schema.recipe import ServiceConfig, ServiceMetricsConfig
from srt_schema.registry import SERVICE_KINDS, ServiceKind, ServicePhase

__all__ = [
    "is_infra",
    "kind_command",
    "kind_of",
    "kind_ports",
    "kind_readiness",
    "service_phase",
]

LMCACHE_RPC_PORT = SERVICE_KINDS["lmcache-server"].port("rpc")
LMCACHE_HTTP_PORT = SERVICE_KINDS["lmcache-server"].port("http")
RAY_PORT = SERVICE_KINDS["ray"].port("gcs")


def kind_of(service: ServiceConfig) -> ServiceKind:
    """The registry row of ``service.type`` (the validator refused any other type)."""
    kind = SERVICE_KINDS.get(service.type)
    if kind is None:
        raise PlanningError(
            f"$.services[{service.name}].type: unknown service type {service.type!r}; "
            f"available: {', '.join(sorted(SERVICE_KINDS))}"
        )
    return kind


def is_infra(service: ServiceConfig) -> bool:
    """The discovery plane (etcd, NATS): started first, stopped last, no discovery env."""
    return kind_of(service).start == "infra"


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
    metrics = service.metrics
    if service.type.endswith("-exporter"):
        # An exporter's port is its metrics config (the table holds the default of that config).
        if isinstance(metrics, ServiceMetricsConfig):
            return {"metrics": metrics.port}
        return {f"metrics_{i}": m.port for i, m in enumerate(metrics)}
    return dict(kind_of(service).ports)


def kind_readiness(
    ctx: PlanContext, service: ServiceConfig, node: str, ports: dict[str, int]
) -> Readiness | None:
    config = service.readiness
    host = ctx.address(node)
    kind = kind_of(service)
    timeout = float(config.timeout_seconds if config else kind.readiness_timeout)
    interval = float(config.interval_seconds if config else 2)
    if config is None:
        match kind.readiness:
            case "http":
                return HttpProbe(
                    host=host,
                    port=ports["http"],
                    path=kind.readiness_path,
                    timeout_seconds=timeout,
                    interval_seconds=interval,
                )
            case "log":
                # gms is the one log-gated kind: its marker is the failover module's.
                return LogProbe(
                    pattern=GMS_READY_MARKER, timeout_seconds=timeout, interval_seconds=interval
                )
            case "tcp":
                first = next(iter(ports.values()))
                return TcpProbe(
                    host=host, port=first, timeout_seconds=timeout, interval_seconds=interval
                )
            case "none":
                return None
            case _:
                assert_never(kind.readiness)
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


def service_phase(service: ServiceConfig) -> ServicePhase:
    match service.start:
        case "before_workers":
            return "before_workers"
        case "after_frontend":
            return "after_frontend"
        case None:
            return kind_of(service).start
        case other:
            raise PlanningError(
                f"$.services[{service.name}].start: {other!r} is not before_workers or "
                "after_frontend"
            )
