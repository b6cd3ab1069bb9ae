"""Implied and declared services: etcd, NATS, Mooncake, exporters, generic, pools, sidecars.

Effective list = implied services first (a declared service of the same name replaces it;
``enabled: false`` drops it), then declared services in order (docs/planner.md#services).
Placement (docs/planner.md#placement), instance naming and per-worker sidecars
(docs/planner.md#services-pools-and-sidecars).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from srt_planner._recipe import (
    capabilities,
    connector_of,
    engine_of,
    failover_of,
    resolve_roles,
)
from srt_planner.context import PlanContext
from srt_planner.discovery import discovery_env, needs_etcd, needs_nats
from srt_planner.engines.base import WorkerProcess
from srt_planner.engines.failover import worker_dir
from srt_planner.env import layer_env, render_placeholders
from srt_planner.errors import PlanningError, PlanningProblemsError
from srt_planner.exporters import (
    HOST_NATIVE_KINDS,
    NO_WRAPPER_KINDS,
    exporter_files,
    implied_exporters,
)
from srt_planner.plan import GeneratedFile, ProcessSpec
from srt_planner.ports import (
    MOONCAKE_HTTP_PORT,
    MOONCAKE_RPC_PORT,
    NATS_PORT,
)
from srt_planner.service_kinds import (
    is_infra,
    kind_command,
    kind_of,
    kind_ports,
    kind_readiness,
    service_phase,
)
from srt_planner.service_source import (
    SOURCE_DIR_ENV,
    build_source_steps,
    run_dir,
    source_preamble,
)
from srt_planner.srun import SrunStep, merge_srun_options, render_srun, wrap_command
from srt_schema.recipe import (
    ServiceConfig,
    ServicePlacementConfig,
    VLLMFailoverConfig,
)

__all__ = ["build_services", "effective_services"]


class _Instance(msgspec.Struct, frozen=True, kw_only=True):
    node: str
    worker: WorkerProcess | None = None


def _uses_lmcache_mp(ctx: PlanContext) -> bool:
    for role in resolve_roles(ctx.recipe):
        engine = engine_of(ctx.recipe, role.name)
        if capabilities(engine).kv_connector:
            name = role.config.args.get("connector", connector_of(engine))
            if name == "lmcache-mp":
                return True
    return False


def _failover(ctx: PlanContext, role: str) -> VLLMFailoverConfig | None:
    return failover_of(engine_of(ctx.recipe, role))


def _uses_failover(ctx: PlanContext) -> bool:
    return any(_failover(ctx, role.name) is not None for role in resolve_roles(ctx.recipe))


#: Kinds a job runs once, whatever the declared service is named.
_ONE_PER_JOB = frozenset({"etcd", "nats", "lmcache-server"})


def effective_services(ctx: PlanContext) -> tuple[tuple[ServiceConfig, str | None], ...]:
    """(service, implied_by) in launch order; implied ones first."""
    declared = {s.name: s for s in ctx.recipe.services}
    implied: list[tuple[ServiceConfig, str]] = []
    if needs_etcd(ctx):
        implied.append((ServiceConfig(name="etcd", type="etcd"), "frontend.type dynamo"))
    if needs_nats(ctx.recipe):
        implied.append((ServiceConfig(name="nats", type="nats"), "a nats request/event plane"))
    if _uses_lmcache_mp(ctx):
        implied.append(
            (
                ServiceConfig(name="lmcache-server", type="lmcache-server"),
                "vLLM connector lmcache-mp",
            )
        )
    if _uses_failover(ctx):
        per_worker = ServicePlacementConfig(node="workers", per="worker")
        implied.append(
            (ServiceConfig(name="gms", type="gms", placement=per_worker), "engine.failover")
        )
    implied += implied_exporters(ctx)
    # A declared service replaces the implied one of its name, or, for the one-per-job planes
    # (etcd, NATS, the LMCache server), the implied one of its type: two would bind one port.
    by_type = {s.type: s for s in reversed(ctx.recipe.services) if s.type in _ONE_PER_JOB}
    out: list[tuple[ServiceConfig, str | None]] = []
    for service, reason in implied:
        replacement = declared.get(service.name) or by_type.get(service.type)
        out.append((replacement, None) if replacement is not None else (service, reason))
    names = {service.name for service, _ in out}
    out += [(s, None) for s in ctx.recipe.services if s.name not in names]
    return tuple((s, why) for s, why in out if s.enabled and not s.external)


def _placement(service: ServiceConfig) -> ServicePlacementConfig:
    if service.placement is not None:
        return service.placement
    if service.nodes is not None:
        return ServicePlacementConfig(node="workers")
    return ServicePlacementConfig(node=kind_of(service).placement)


def _dedupe(nodes: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(nodes))


def _nodes(
    ctx: PlanContext, service: ServiceConfig, workers: Sequence[WorkerProcess]
) -> tuple[str, ...]:
    carving = ctx.carving
    placement = _placement(service)
    if placement.pool is not None:
        pool = carving.pools.get(placement.pool)
        if pool is None:
            raise PlanningError(
                f"$.services[{service.name}].placement.pool: {placement.pool!r} is not a service "
                f"that owns nodes; pools: {', '.join(carving.pools) or 'none'}"
            )
        return pool
    if service.nodes is not None:
        return carving.pools[service.name]
    pools = tuple(n for pool in carving.pools.values() for n in pool)
    match placement.node:
        case "head":
            return (carving.head,)
        case "infra" | "dedicated":
            return (carving.infra,)
        case "prefill" | "decode" | "agg":
            return _dedupe([w.node for w in workers if w.endpoint.role == placement.node])
        case "workers":
            return carving.workers
        case "compute":
            return _dedupe(carving.workers + pools)
        case "all":
            return _dedupe(carving.workers + pools + (carving.head, carving.infra, carving.bench))
        case other:
            raise PlanningError(
                f"$.services[{service.name}].placement.node: {other!r} is not one of head, infra, "
                "dedicated, prefill, decode, agg, workers, compute, all"
            )


def _instances(
    ctx: PlanContext, service: ServiceConfig, workers: Sequence[WorkerProcess]
) -> list[_Instance]:
    nodes = _nodes(ctx, service, workers)
    if ctx.local and service.type.endswith("-exporter"):
        # The local launcher's nodes are one host, and an exporter reports the machine: one.
        nodes = nodes[:1]
    placement = _placement(service)
    if placement.per != "worker":
        return [_Instance(node=node) for node in nodes]
    if placement.node not in ("prefill", "decode", "agg", "workers") or service.nodes is not None:
        raise PlanningError(
            f"$.services[{service.name}].placement.per: 'worker' needs placement.node prefill, "
            "decode, agg or workers and no 'nodes'"
        )
    roles = (placement.node,) if placement.node != "workers" else ("prefill", "decode", "agg")
    return [
        _Instance(node=w.node, worker=w)
        for node in nodes
        for w in workers
        if w.node == node and w.endpoint.role in roles
    ]


def _placeholders(
    ctx: PlanContext,
    service: ServiceConfig,
    instance: _Instance,
    index: int,
    source_dir: str | None = None,
) -> dict[str, str]:
    carving = ctx.carving
    pool = carving.pools.get(_placement(service).pool or service.name, ())
    values = {
        "node": instance.node,
        "node_ip": ctx.address(instance.node),
        "node_id": str(index),
        "index": str(index),
        "role": service.name,
        "head_node": carving.head,
        "head_ip": ctx.address(carving.head),
        "infra_node": carving.infra,
        "infra_ip": ctx.address(carving.infra),
        "master_port": str(MOONCAKE_RPC_PORT),
        "metadata_port": str(MOONCAKE_HTTP_PORT),
        "gpus_per_node": str(ctx.gpus_per_node),
    }
    if pool:
        values |= {
            "pool_node": pool[0],
            "pool_ip": ctx.address(pool[0]),
            "pool_nodes": ",".join(pool),
            "pool_ips": ",".join(ctx.address(n) for n in pool),
            "pool_node_count": str(len(pool)),
        }
    if source_dir is not None:
        values["source_dir"] = source_dir
    worker = instance.worker
    if worker is not None:
        values |= {
            "worker_role": worker.endpoint.role,
            "worker_index": str(worker.endpoint.index),
            "worker_node_rank": str(worker.node_rank),
            "worker_gpus": ",".join(str(g) for g in worker.gpus),
            "worker_gpu_count": str(len(worker.gpus)),
        }
    return values


def _gms_env(
    ctx: PlanContext, service: ServiceConfig, worker: WorkerProcess | None
) -> dict[str, str]:
    """The gms service serves its worker's directory (``GMS_SOCKET_DIR``)."""
    if service.type != "gms" or worker is None:
        return {}
    failover = _failover(ctx, worker.endpoint.role)
    if failover is None:
        raise PlanningError(
            f"$.services[{service.name}]: a gms service serves vLLM failover workers but "
            f"roles.{worker.endpoint.role} has no engine.failover; set engine.failover or "
            "remove the service"
        )
    role, index = worker.endpoint.role, worker.endpoint.index
    return {"GMS_SOCKET_DIR": worker_dir(failover, ctx.job_id, role, index)}


def _instance_name(service: ServiceConfig, instance: _Instance, many: bool) -> str:
    worker = instance.worker
    if worker is not None:
        return (
            f"service_{service.name}_{worker.endpoint.role}_{worker.endpoint.index}_{instance.node}"
        )
    return f"service_{service.name}_{instance.node}" if many else f"service_{service.name}"


def _check_source(service: ServiceConfig) -> None:
    """``build_command`` and ``build_timeout_seconds`` act only on a checkout."""
    where = f"$.services[{service.name}]"
    if service.build_command is not None and service.source is None:
        raise PlanningError(
            f"{where}.build_command: runs in the service's source checkout, but the service has "
            "no source; add source: {git: <url>, rev: <tag or sha>}, or move the command into "
            "the service's preamble"
        )
    if service.build_timeout_seconds <= 0:
        raise PlanningError(
            f"{where}.build_timeout_seconds: {service.build_timeout_seconds} is not a time "
            "limit; use a positive number of seconds (default 1800)"
        )
    if service.source is not None and service.type in NO_WRAPPER_KINDS:
        raise PlanningError(
            f"{where}.source: a {service.type} image has no shell to run from a checkout; "
            "remove source or use a generic service"
        )


def build_services(
    ctx: PlanContext, workers: Sequence[WorkerProcess]
) -> tuple[list[ProcessSpec], list[GeneratedFile]]:
    specs: list[ProcessSpec] = []
    files: list[GeneratedFile] = []
    data = ctx.scratch_dir
    problems: list[str] = []
    for order, (service, implied_by) in enumerate(effective_services(ctx)):
        phase = service_phase(service)
        if service.type == "nats":
            max_mb = service.options.get("max_payload_mb")
            conf = [f"port: {NATS_PORT}", f'jetstream {{ store_dir: "{data}/nats" }}']
            if max_mb is not None:
                conf.append(f"max_payload: {int(max_mb) * 1024 * 1024}")
            files.append(GeneratedFile(path="nats.conf", content="\n".join(conf) + "\n"))
        try:
            # Services are placed independently: every one that cannot be is named at once.
            _check_source(service)
            instances = _instances(ctx, service, workers)
        except PlanningError as exc:
            problems.append(str(exc))
            continue
        many = len(instances) > 1
        ports = kind_ports(service)
        for index, instance in enumerate(instances):
            host_native = service.type in HOST_NATIVE_KINDS
            container = None if host_native else ctx.container(service.container)
            source_dir: str | None = None
            if service.source is not None:
                # The checkout as this process sees it (``/logs`` inside a container).
                seen = ctx.in_log_dir if container is not None else ctx.log_dir
                source_dir = run_dir(seen, service)
            command = kind_command(ctx, service, data, index, instances[0].node) + service.args
            values = _placeholders(ctx, service, instance, index, source_dir)
            argv = tuple(render_placeholders(part, values) for part in command)
            rendered = {k: render_placeholders(v, values) for k, v in service.env.items()}
            mask: dict[str, str] = {}
            worker = instance.worker
            if worker is not None and len(worker.gpus) < ctx.gpus_per_node:
                mask = {ctx.cluster.visible_devices_env: ",".join(str(g) for g in worker.gpus)}
            inherit = service.inherit_discovery_env and not is_infra(service)
            discovery = discovery_env(ctx) if inherit else {}
            source_env = {SOURCE_DIR_ENV: source_dir} if source_dir is not None else {}
            env = layer_env(discovery, _gms_env(ctx, service, worker), source_env, rendered, mask)
            preamble: tuple[str, ...] = ()
            if source_dir is not None:
                preamble = (source_preamble(source_dir),)
            if service.type in ("etcd",):
                preamble += (f"rm -rf {data}/etcd && mkdir -p {data}/etcd",)
            if service.type == "nats":
                preamble += (f"rm -rf {data}/nats && mkdir -p {data}/nats",)
            if service.preamble:
                preamble += (render_placeholders(service.preamble, values),)
            name = _instance_name(service, instance, many)
            log = f"{name}.out"
            step = SrunStep(
                step_name=name,
                nodes=(instance.node,),
                log_path=ctx.log_path(log),
                container=container,
                options=merge_srun_options(ctx.recipe.srun_options, service.srun_options),
                cpus_per_task=service.cpus_per_task,
                cpu_bind=service.cpu_bind,
                het_group=ctx.het_group(instance.node),
            )
            task = (
                argv
                if service.type in NO_WRAPPER_KINDS
                else wrap_command(
                    argv, env=env, preamble=preamble, head=ctx.cluster.default_bash_preamble
                )
            )
            critical = (
                service.critical if service.critical is not None else kind_of(service).critical
            )
            if index == 0:
                # Once, on the first node: the checkout is on the shared log directory.
                specs += build_source_steps(
                    ctx, service, node=instance.node, phase=phase, env=env, container=container
                )
            specs.append(
                ProcessSpec(
                    name=name,
                    kind="service",
                    role=service.name,
                    index=index,
                    nodes=(instance.node,),
                    gpus=worker.gpus if worker is not None else (),
                    ports={} if service.type == "ray" and index > 0 else dict(ports),
                    env=env,
                    argv=argv,
                    preamble=preamble,
                    srun_argv=() if ctx.local else render_srun(step, task, job_id=ctx.job_id),
                    container=container,
                    log_file=log,
                    phase=phase,
                    order=order,
                    readiness=kind_readiness(ctx, service, instance.node, ports),
                    critical=critical,
                    terminal=service.terminal,
                    stop_grace_seconds=30.0,
                    stop_tier=2 if is_infra(service) else 1,
                    implied_by=implied_by,
                    het_group=step.het_group,
                )
            )
    if problems:
        raise PlanningProblemsError(problems)
    files += exporter_files([service for service, _ in effective_services(ctx)])
    return specs, files
