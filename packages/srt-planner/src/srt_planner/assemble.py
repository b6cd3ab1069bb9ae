"""``plan_job``: the complete JobPlan as a pure function of recipe, cluster and allocation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from srt_planner._recipe import capabilities, dp_launch_mode_of, engine_of, resolve_roles
from srt_planner.allocation import local_time_limit, local_time_limit_seconds
from srt_planner.benchmark import build_benchmark
from srt_planner.carving import carve_nodes
from srt_planner.context import (
    SCRATCH,
    PlanContext,
    addresses_for,
    container_runtime_of,
    frontend_type_of,
    python_of,
)
from srt_planner.datasets import DatasetSettings
from srt_planner.dynamo_install import install_files
from srt_planner.engines.base import WorkerProcess
from srt_planner.engines.sidecar import sidecar_mode
from srt_planner.engines.vllm import data_parallel, every_process_registers
from srt_planner.errors import PlanningError
from srt_planner.frontends import (
    RouterInput,
    build_frontends,
    health_gate,
    is_direct,
    plan_frontend_layout,
    public_url,
)
from srt_planner.hostlist import expand_hostlist
from srt_planner.mounts import build_mounts
from srt_planner.plan import (
    START_PHASES,
    GeneratedFile,
    JobPlan,
    NodeRoles,
    ProcessSpec,
    RunSummary,
    StandIn,
)
from srt_planner.plan_checks import check_placement
from srt_planner.ports import FRONTEND_PUBLIC_PORT, PortAllocator
from srt_planner.post_eval import EvalRequest, build_post_eval
from srt_planner.power import build_power
from srt_planner.preamble import FINGERPRINT_SCRIPT
from srt_planner.profiling import profiles_finalize
from srt_planner.services import build_services
from srt_planner.srun import SrunStep, render_srun
from srt_planner.staging import build_staging
from srt_planner.stand_in import check_frontend
from srt_planner.telemetry import build_telemetry
from srt_planner.topology import expand_processes, plan_endpoints
from srt_planner.validity import validity_finalize
from srt_planner.workers import build_workers
from srt_schema.cluster import ClusterConfig
from srt_schema.recipe import (
    HostSetupConfig,
    IdentityConfig,
    Recipe,
)
from srt_schema.roles import engine_type, serving_engine

__all__ = ["plan_job"]


def _refuse_unplanned(recipe: Recipe) -> None:
    """Features the planner does not lay out yet fail loudly instead of being ignored."""
    sidecars = sidecar_mode(recipe)
    for role in resolve_roles(recipe) if sidecars else ():
        engine = engine_of(recipe, role.name)
        kind = engine.__struct_config__.tag
        if not capabilities(engine).dynamo_sidecar:
            raise PlanningError(
                f"$.roles.{role.name}.sidecar: the Dynamo sidecar mode is planned for sglang, "
                f"vllm and trtllm, not {kind}; remove 'sidecar: true' (and dynamo.sidecar)"
            )
        if capabilities(engine).data_parallel and dp_launch_mode_of(engine) == "per_gpu":
            raise PlanningError(
                f"$.roles.{role.name}.sidecar: the Dynamo sidecar mode with vLLM needs "
                "engine.dp_launch_mode per_node (one native server per worker); set "
                "dp_launch_mode: per_node or remove 'sidecar: true'"
            )
        nodes = -(-role.gpus_per_worker // recipe.resources.gpus_per_node)
        dp = data_parallel(dict(role.config.args)) if capabilities(engine).data_parallel else 1
        if nodes > 1 and dp > 1:
            # Only the leader serves gRPC and runs the sidecar: a follower node's data-parallel
            # ranks (hybrid load balancing) would be unreachable.
            raise PlanningError(
                f"$.roles.{role.name}.sidecar: a vLLM data-parallel worker across {nodes} nodes "
                "is not planned with the Dynamo sidecar (only its leader runs one); use workers "
                "of one node each (more workers, fewer GPUs) or remove 'sidecar: true'"
            )


def _serves(recipe: Recipe, *, serve_only: bool, request: EvalRequest) -> bool:
    """Whether the job serves until cancelled (``srtctl apply --serve-only``, or
    ``benchmark.type: manual`` unless EVAL_ONLY makes the eval the job's result)."""
    return serve_only or (recipe.benchmark.type == "manual" and request.mode != "eval_only")


def _registered_instances(
    recipe: Recipe, expanded: tuple[tuple[WorkerProcess, ...], ...]
) -> dict[str, int]:
    """Dynamo instances per role for vLLM data parallelism (docs/planner.md#health-gate)."""
    if recipe.frontend.type != "dynamo":
        return {}
    counts: dict[str, int] = {}
    for role in resolve_roles(recipe):
        engine = engine_of(recipe, role.name)
        args = dict(role.config.args)
        groups = [g for g in expanded if g[0].endpoint.role == role.name]
        if not groups or not every_process_registers(engine, args, len(groups[0][0].gpus)):
            continue
        if dp_launch_mode_of(engine) == "per_gpu":
            counts[role.name] = role.workers * data_parallel(args)
        else:
            counts[role.name] = sum(len(g) for g in groups)
    return counts


def _run_summary(recipe: Recipe) -> RunSummary:
    """The recipe facts status reports describe (the first update's ``metadata``)."""
    return RunSummary(
        model_path=recipe.model.path,
        precision=recipe.model.precision,
        gpu_type=recipe.resources.gpu_type,
        gpus_per_node=recipe.resources.gpus_per_node,
        workers={
            f"{role}_workers": config.workers
            for role, config in sorted(recipe.roles.items())
            if role in ("prefill", "decode", "agg") and config.workers is not None
        },
        benchmark_type=recipe.benchmark.type,
        backend_type=engine_type(serving_engine(recipe)),
        frontend_type=recipe.frontend.type,
    )


def _log_dir(recipe: Recipe, job_id: str) -> str:
    return recipe.output.log_dir.replace("{job_id}", job_id)


def _host_setup(ctx: PlanContext) -> tuple[list[ProcessSpec], list[ProcessSpec]]:
    block = ctx.recipe.host_setup
    if block == HostSetupConfig() and ctx.cluster.default_host_setup is not None:
        block = msgspec.convert(
            msgspec.to_builtins(ctx.cluster.default_host_setup), HostSetupConfig
        )
    carving = ctx.carving
    compute = carving.workers + tuple(n for pool in carving.pools.values() for n in pool)
    nodes = compute
    if block.nodes == "all":
        nodes = (*compute, carving.head, carving.infra, carving.bench)
    nodes = tuple(dict.fromkeys(nodes))

    def steps(commands: Sequence[str], kind: str) -> list[ProcessSpec]:
        if not commands:
            return []
        argv = ("bash", "-c", " && ".join(commands))
        out = []
        for node in nodes:
            name = f"host_{kind}_{node}"
            step = SrunStep(
                step_name=name,
                nodes=(node,),
                log_path=ctx.log_path(f"{name}.out"),
                het_group=ctx.het_group(node),
            )
            out.append(
                ProcessSpec(
                    name=name,
                    kind="service",
                    role=f"host_{kind}",
                    nodes=(node,),
                    argv=argv,
                    srun_argv=() if ctx.local else render_srun(step, argv, job_id=ctx.job_id),
                    log_file=f"{name}.out",
                    phase="host_setup",
                    critical=not block.ignore_failure,
                    oneshot=True,
                    timeout_seconds=float(block.timeout_seconds),
                    het_group=step.het_group,
                )
            )
        return out

    return steps(block.commands, "setup"), steps(block.teardown, "teardown")


def _with_public_port(
    expanded: tuple[tuple[WorkerProcess, ...], ...], ctx: PlanContext, disaggregated: bool
) -> tuple[tuple[WorkerProcess, ...], ...]:
    """Direct frontends: the agg leader binds the public port itself."""
    if not is_direct(ctx.frontend, disaggregated):
        return expanded
    agg = [group for group in expanded if group[0].endpoint.role == "agg"]
    if len(agg) != 1:
        raise PlanningError(
            f"$.frontend.type: {ctx.frontend!r} serves exactly one agg worker directly but the "
            f"recipe has {len(agg)}; set roles.agg.workers: 1 or use a router frontend"
        )
    out = []
    for group in expanded:
        if group is agg[0]:
            leader = group[0]
            ports = {**leader.ports, "public": FRONTEND_PUBLIC_PORT}
            out.append((msgspec.structs.replace(leader, ports=ports), *group[1:]))
            continue
        out.append(group)
    return tuple(out)


def plan_job(
    recipe: Recipe,
    cluster: ClusterConfig,
    nodelist: str | Sequence[str],
    job_id: str,
    *,
    het_groups: Sequence[Sequence[str]] | None = None,
    addresses: Mapping[str, str] | None = None,
    log_dir: str | None = None,
    serve_only: bool = False,
    eval_request: EvalRequest | None = None,
    stand_in: StandIn | None = None,
    datasets: DatasetSettings | None = None,
    scrape_interval_given: bool = False,
) -> JobPlan:
    """Every process of the job on the granted nodes, validated; pure and deterministic.

    ``nodelist`` is a Slurm hostlist expression or the expanded names; ``het_groups`` the node
    lists of the two components of a heterogeneous job; ``addresses`` the address workers use to
    reach a node (default: its name); ``log_dir`` the host log directory (default: the recipe's
    ``output.log_dir`` with ``{job_id}`` filled in); ``eval_request`` what the job's environment
    asks of ``post_eval`` (:func:`srt_planner.post_eval.build_eval_request`; default: no eval);
    ``stand_in`` replaces the GPU engines by stand-ins (:mod:`srt_planner.stand_in`);
    ``datasets`` the job environment's download settings
    (:func:`srt_planner.datasets.build_dataset_settings`; default: none);
    ``scrape_interval_given`` whether the job's document sets the Tachometer
    ``collect_interval_ms`` (``LoadedJob.sets``): kept exactly, else measurement windows are
    sampled densely (:mod:`srt_planner.telemetry`).
    """
    _refuse_unplanned(recipe)
    nodes = expand_hostlist(nodelist) if isinstance(nodelist, str) else tuple(nodelist)
    groups = tuple(tuple(g) for g in het_groups) if het_groups is not None else None
    if groups is not None:
        nodes = tuple(n for g in groups for n in g)
    carving = carve_nodes(recipe, nodes, het_groups=groups)
    logs = log_dir or _log_dir(recipe, job_id)
    placeholders = {
        "job_id": job_id,
        "run_name": f"{recipe.name}_{job_id}",
        "head_node_ip": (addresses or {}).get(carving.head, carving.head),
        "log_dir": logs,
        "model_path": recipe.model.path,
        "container_image": recipe.model.container,
        "gpus_per_node": str(recipe.resources.gpus_per_node),
    }
    ctx = PlanContext(
        recipe=recipe,
        cluster=cluster,
        job_id=job_id,
        log_dir=logs,
        carving=carving,
        addresses=addresses_for(nodes, addresses),
        frontend=frontend_type_of(recipe),
        mounts=build_mounts(recipe, cluster, log_dir=logs, placeholders=placeholders),
        python=python_of(cluster),
        node_ids={node: i for i, node in enumerate(carving.workers)},
        stand_in=stand_in,
        datasets=datasets or DatasetSettings(),
        scrape_interval_given=scrape_interval_given,
    )
    endpoints = plan_endpoints(recipe, carving)
    allocator = PortAllocator(single_host=ctx.local, sidecar_base=recipe.dynamo.sidecar_port)
    expanded = expand_processes(recipe, endpoints, allocator)
    disaggregated = any(e.role != "agg" for e in endpoints)
    expanded = _with_public_port(expanded, ctx, disaggregated)
    # Shadow engines (vLLM failover) are workers but neither routed to, counted by the health
    # gate, nor given per-worker services: everything but the worker builder sees engine 0.
    serving = tuple(group for group in expanded if group[0].engine == 0)
    flat = [proc for group in serving for proc in group]
    routers = RouterInput(
        prefill=tuple(g[0] for g in serving if g[0].endpoint.role == "prefill"),
        decode=tuple(g[0] for g in serving if g[0].endpoint.role == "decode"),
        agg=tuple(g[0] for g in serving if g[0].endpoint.role == "agg"),
    )
    layout = plan_frontend_layout(ctx, routers, disaggregated)
    setup, teardown = _host_setup(ctx)
    services, service_files = build_services(ctx, flat)
    staging, staging_files = build_staging(ctx)
    workers, worker_files = build_workers(ctx, expanded)
    frontends, frontend_files = build_frontends(ctx, routers, layout)
    if stand_in is not None:
        check_frontend(ctx, has_frontend_process=any(f.kind == "frontend" for f in frontends))
    request = eval_request or EvalRequest()
    serves = _serves(recipe, serve_only=serve_only, request=request)
    if serve_only:
        # --serve-only: no benchmark and no eval, whatever the recipe or EVAL_ONLY say
        # (docs/recipes.md#apply).
        request = EvalRequest()
    bench: list[ProcessSpec] = []
    bench_files: list[GeneratedFile] = []
    bench_config: str | None = None
    evals: list[ProcessSpec] = []
    eval_files: list[GeneratedFile] = []
    if not serves:
        # Serving plans neither a benchmark nor RUN_EVAL's eval (which runs after a benchmark
        # that exited 0, and a serving job has none).
        bench, bench_files, bench_config = build_benchmark(ctx, layout, routers, flat)
        evals, eval_files = build_post_eval(ctx, layout, request)
    if request.mode == "eval_only":
        # EVAL_ONLY: the eval replaces the benchmark (docs/telemetry-and-bench.md#post-eval).
        bench, bench_files, bench_config = [], [], None
    telemetry, telemetry_files = build_telemetry(ctx, [*services, *workers, *frontends])
    power = build_power(ctx, [*services, *workers, *frontends])
    processes = [
        *setup,
        *services,
        *staging,
        *workers,
        *frontends,
        *power.processes,
        *telemetry,
        *bench,
        *evals,
    ]
    processes.sort(key=lambda spec: START_PHASES.index(spec.phase))
    check_placement(processes, nodes, ctx.local)
    files: dict[str, GeneratedFile] = {}
    for generated in [
        *service_files,
        *staging_files,
        *worker_files,
        *frontend_files,
        *telemetry_files,
        *power.files,
        *bench_files,
        *eval_files,
        *install_files(ctx),
    ]:
        files[generated.path] = generated
    return JobPlan(
        job_id=job_id,
        job_name=recipe.name,
        nodes=nodes,
        node_roles=NodeRoles(
            head=carving.head,
            infra=carving.infra,
            bench=carving.bench,
            workers=carving.workers,
            pools=dict(carving.pools),
        ),
        container_runtime=container_runtime_of(cluster),
        launcher=cluster.launcher,
        processes=tuple(processes),
        files=tuple(files[path] for path in sorted(files)),
        health=health_gate(ctx, layout, routers, _registered_instances(recipe, serving)),
        frontend_url=public_url(ctx, layout),
        served_model_name=ctx.served_model_name,
        benchmark_config=bench_config,
        serve_only=serves,
        eval_only=request.mode == "eval_only",
        stream_benchmark_output=bool(bench) and recipe.benchmark.stream_output,
        identity=None if recipe.identity == IdentityConfig() else recipe.identity,
        fingerprint_script=FINGERPRINT_SCRIPT if workers else None,
        teardown=tuple(teardown),
        finalize=(
            *power.finalize,
            *profiles_finalize(ctx, processes, flat, benchmark=bool(bench)),
            *validity_finalize(ctx, benchmark=bool(bench)),
        ),
        # The recipe as loaded already carries srtslurm.yaml's reporting default.
        reporting=recipe.reporting,
        cluster=cluster.cluster,
        summary=_run_summary(recipe),
        stand_in=stand_in,
        time_limit=local_time_limit(recipe, cluster),
        time_limit_seconds=local_time_limit_seconds(recipe, cluster),
        scratch=SCRATCH,
    )
