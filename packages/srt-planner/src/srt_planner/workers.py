"""Worker ProcessSpecs: env precedence, GPU masks, srun steps (docs/planner.md#worker-environment,
#mpi-endpoints)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from srt_planner._recipe import (
    Engine,
    ResolvedRole,
    engine_of,
    failover_of,
    is_mpi,
    resolve_roles,
    sequential_node_start_of,
)
from srt_planner.context import PlanContext
from srt_planner.discovery import discovery_env, kvbm_env, mooncake_env, otel_env
from srt_planner.engines import EngineCommand, WorkerProcess, WorkerRequest, build_engine_command
from srt_planner.engines.failover import worker_dir
from srt_planner.env import layer_env, template_node_env
from srt_planner.nsys import with_report, worker_nsys
from srt_planner.plan import GeneratedFile, HttpProbe, ProcessSpec, RestartSpec
from srt_planner.preamble import fingerprint_capture, needs_root, step_preamble
from srt_planner.profiling import profile_for, profiling_env
from srt_planner.srun import SrunStep, merge_srun_options, render_srun, wrap_command
from srt_planner.stand_in import stand_in_command, stand_in_readiness
from srt_schema.recipe import RestartPolicy

__all__ = ["build_workers", "restart_spec"]

DYN_LOG = "info,dynamo_runtime::pipeline::network::ingress::push_handler=warn"


def restart_spec(role: ResolvedRole) -> RestartSpec:
    value = role.config.restart
    if isinstance(value, RestartPolicy):
        return RestartSpec(
            policy=value.policy,
            max_restarts=value.max_restarts,
            backoff_seconds=value.backoff_seconds,
            max_backoff_seconds=value.max_backoff_seconds,
        )
    return RestartSpec(policy=value)


def _base_env(ctx: PlanContext, proc: WorkerProcess) -> dict[str, str]:
    env = {"HEAD_NODE_IP": ctx.address(ctx.carving.head)}
    if ctx.dynamo_workers:
        env.update(discovery_env(ctx))
        env["DYN_SYSTEM_PORT"] = str(proc.ports["sys"])
        env["DYN_REQUEST_PLANE"] = ctx.recipe.dynamo.request_plane
        env["DYN_SKIP_SGLANG_LOG_FORMATTING"] = "1"
        env["DYN_LOG"] = DYN_LOG
        if ctx.recipe.dynamo.event_plane is not None:
            env["DYN_EVENT_PLANE"] = ctx.recipe.dynamo.event_plane
    return env


def _mask(ctx: PlanContext, gpus: Sequence[int], command: EngineCommand) -> dict[str, str]:
    if not command.wants_mask or len(gpus) >= ctx.gpus_per_node:
        return {}
    return {ctx.cluster.visible_devices_env: ",".join(str(g) for g in sorted(gpus))}


def _worker_env(
    ctx: PlanContext, role: ResolvedRole, proc: WorkerProcess, command: EngineCommand
) -> dict[str, str]:
    node_id = ctx.node_ids.get(proc.node, 0)
    return layer_env(
        _base_env(ctx, proc),
        otel_env(ctx, f"{ctx.recipe.name}-{role.name}"),
        {k: v for k, v in command.env.items() if k.startswith("SGLANG_")},
        template_node_env(role.config.env, proc.node, node_id),
        template_node_env(ctx.recipe.environment, proc.node, node_id),
        _mask(ctx, proc.gpus, command),
        {k: v for k, v in command.env.items() if not k.startswith("SGLANG_")},
        mooncake_env(ctx, proc.node, role.config.env),
        profiling_env(ctx.recipe, role.name, ctx.in_log_dir),
        kvbm_env(
            ctx.address(proc.endpoint.leader),
            len(proc.endpoint.nodes) > 1,
            proc.ports.get("kvbm_zmq"),
            {**role.config.env, **ctx.recipe.environment},
        ),
    )


def _failover_preamble(ctx: PlanContext, engine: Engine, proc: WorkerProcess) -> tuple[str, ...]:
    """Failover engines create their worker's shared directory (GMS sockets, election lock)."""
    failover = failover_of(engine)
    if failover is None:
        return ()
    directory = worker_dir(failover, ctx.job_id, proc.endpoint.role, proc.endpoint.index)
    return (f"mkdir -p {shlex.quote(directory)}",)


def _fatal_patterns(ctx: PlanContext, command: EngineCommand) -> tuple[str, ...]:
    health = ctx.recipe.health_check
    if not health.fatal_log_markers:
        return ()
    return command.fatal_log_patterns + health.extra_fatal_log_patterns


def _readiness(ctx: PlanContext, proc: WorkerProcess, sequential: int) -> HttpProbe | None:
    if sequential <= 0:
        return None
    port = proc.ports["http"] if ctx.frontend == "trtllm_serve" else proc.ports["sys"]
    return HttpProbe(
        host=ctx.address(proc.node),
        port=port,
        path="/health",
        timeout_seconds=float(
            ctx.recipe.health_check.max_attempts * ctx.recipe.health_check.interval_seconds
        ),
        interval_seconds=float(ctx.recipe.health_check.interval_seconds),
    )


def _mpi_step(
    ctx: PlanContext, siblings: Sequence[WorkerProcess], base: SrunStep
) -> tuple[SrunStep, tuple[str, ...]]:
    """One srun for the whole endpoint; uneven per-node GPU sets become a per-node mask case."""
    hosts = tuple(p.node for p in siblings for _ in p.gpus)
    per_node = max(len(p.gpus) for p in siblings)
    options = dict(base.options)
    preamble: tuple[str, ...] = ()
    task_hosts: tuple[str, ...] | None = None
    if len(siblings) > 1:
        options["ntasks-per-node"] = str(per_node)
        options["kill-on-bad-exit"] = "1"
        task_hosts = hosts
    if len({p.gpus for p in siblings}) > 1:
        var = ctx.cluster.visible_devices_env
        cases = " ".join(
            f"{p.node}) export {var}={','.join(str(g) for g in p.gpus)};;" for p in siblings
        )
        preamble = (f'case "$SLURMD_NODENAME" in {cases} *) exit 1;; esac',)
    step = SrunStep(
        step_name=base.step_name,
        nodes=tuple(p.node for p in siblings),
        ntasks=len(hosts),
        log_path=base.log_path,
        container=base.container,
        options=options,
        mpi="pmix",
        oversubscribe=True,
        cpu_bind="verbose,none",
        het_group=base.het_group,
        export_env=base.export_env,
        task_hosts=task_hosts,
    )
    return step, preamble


def build_workers(
    ctx: PlanContext, expanded: Sequence[tuple[WorkerProcess, ...]]
) -> tuple[list[ProcessSpec], list[GeneratedFile]]:
    """Every worker ProcessSpec (one per process; one per endpoint for MPI engines)."""
    roles = {role.name: role for role in resolve_roles(ctx.recipe)}
    specs: list[ProcessSpec] = []
    files: dict[str, GeneratedFile] = {}
    batches: dict[str, int] = {}
    for siblings in expanded:
        endpoint = siblings[0].endpoint
        role = roles[endpoint.role]
        engine = engine_of(ctx.recipe, role.name)
        # Stand-ins run one process per node, never one MPI task per GPU.
        mpi = is_mpi(engine) and ctx.stand_in is None
        sequential = sequential_node_start_of(engine)
        leader_command: EngineCommand | None = None
        for proc in siblings[:1] if mpi else siblings:
            request = WorkerRequest(ctx=ctx, role=role, process=proc, siblings=siblings)
            if leader_command is not None and is_mpi(engine) and not proc.is_leader:
                # Stand-ins only (else one step spans the endpoint): an MPI engine's command is
                # its leader's, so a follower node stands in for that step's rank there.
                command = leader_command
            else:
                command = build_engine_command(engine, request)
                leader_command = command
            stand_in_for: tuple[str, ...] = ()
            if ctx.stand_in is not None:
                stand_in_for = command.argv
                command = stand_in_command(engine, request, command)
            for generated in command.files:
                files[generated.path] = generated
            env = _worker_env(ctx, role, proc, command)
            if mpi and len({p.gpus for p in siblings}) > 1:
                env.pop(ctx.cluster.visible_devices_env, None)
            nsys = worker_nsys(
                ctx,
                role.name,
                endpoint.index,
                proc.node_rank,
                node=proc.node,
                gpus=proc.gpus,
                trtllm=is_mpi(engine),
            )
            argv = command.argv if nsys is None else (*nsys.prefix, *command.argv)
            primary = f"{role.name}_{endpoint.index}_{proc.node}"
            suffix = f"_e{proc.engine}" if proc.engine else ""
            name = f"{primary}{suffix}"
            log = f"{proc.node}_{role.name}_w{endpoint.index}{suffix}.out"
            # One fingerprint per worker (its leader; shadow engines share the worker's host).
            capture = (
                fingerprint_capture(ctx, role.name, endpoint.index)
                if proc.is_leader and proc.engine == 0
                else ()
            )
            preamble = (
                step_preamble(ctx, install=True, node=proc.node)
                + capture
                + _failover_preamble(ctx, engine, proc)
                + (nsys.preamble if nsys is not None else ())
            )
            base = SrunStep(
                step_name=name,
                nodes=(proc.node,),
                log_path=ctx.log_path(log),
                container=ctx.container(role.config.container),
                options=merge_srun_options(ctx.recipe.srun_options, role.config.srun_options),
                het_group=endpoint.het_group,
                export_env={"ENROOT_REMAP_ROOT": "yes"} if needs_root(ctx) else {},
            )
            step = base
            if mpi:
                step, mask_case = _mpi_step(ctx, siblings, base)
                preamble = preamble + mask_case
            order = 0
            if sequential > 0:
                seen = batches.get(endpoint.leader, 0)
                batches[endpoint.leader] = seen + 1
                order = seen // sequential
            task = wrap_command(
                argv,
                env=env,
                unset=command.env_unset,
                preamble=preamble,
                head=ctx.cluster.default_bash_preamble,
            )
            specs.append(
                ProcessSpec(
                    name=name,
                    kind="worker",
                    role=role.name,
                    index=endpoint.index,
                    nodes=step.nodes,
                    gpus=proc.gpus,
                    node_gpus={p.node: p.gpus for p in siblings}
                    if mpi and len(siblings) > 1
                    else {},
                    ports=proc.bound_ports,
                    env=env,
                    env_unset=command.env_unset,
                    argv=argv,
                    preamble=preamble,
                    srun_argv=() if ctx.local else render_srun(step, task, job_id=ctx.job_id),
                    container=step.container,
                    log_file=log,
                    phase="workers",
                    order=order,
                    readiness=_readiness(ctx, proc, sequential)
                    or (stand_in_readiness(ctx, proc.node, argv) if ctx.stand_in else None),
                    critical=role.config.critical,
                    restart=restart_spec(role),
                    fatal_log_patterns=_fatal_patterns(ctx, command),
                    stop_grace_seconds=max(10.0, nsys.stop_grace_seconds if nsys else 0.0),
                    stop_tier=1,
                    het_group=endpoint.het_group,
                    profile=with_report(
                        profile_for(
                            ctx.recipe, role.name, endpoint.index, proc.node_rank, ctx.in_log_dir
                        ),
                        nsys,
                        f"{ctx.in_log_dir}/profiles/{role.name}",
                    ),
                    engine=proc.engine,
                    shares_gpus_with=primary if proc.engine else None,
                    stand_in_for=stand_in_for if stand_in_for != argv else (),
                )
            )
    return specs, list(files.values())
