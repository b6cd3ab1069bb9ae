"""Frontend processes, nginx and the health gate; one registry keyed by ``FrontendType``."""

from __future__ import annotations

from typing import assert_never

from srt_planner.context import FrontendType, PlanContext
from srt_planner.discovery import discovery_env, otel_env
from srt_planner.env import layer_env
from srt_planner.frontends.base import (
    FrontendLayout,
    RouterInput,
    is_direct,
    placed_node,
    plan_frontend_layout,
)
from srt_planner.frontends.commands import (
    FrontendCommand,
    atomesh_command,
    dynamo_command,
    sglang_router_command,
    tilert_router_command,
    trtllm_serve_command,
    vllm_router_command,
)
from srt_planner.nginx import NGINX_CONFIG, nginx_argv, render_nginx_conf
from srt_planner.nsys import frontend_nsys, with_report
from srt_planner.plan import GeneratedFile, HealthGate, ProcessSpec, TcpProbe
from srt_planner.preamble import needs_root, setup_script, step_preamble
from srt_planner.srun import SrunStep, render_srun, wrap_command
from srt_schema.registry import FRONTENDS

__all__ = [
    "FrontendLayout",
    "RouterInput",
    "build_frontends",
    "health_gate",
    "is_direct",
    "placed_node",
    "plan_frontend_layout",
    "public_url",
]


def public_url(ctx: PlanContext, layout: FrontendLayout) -> str:
    """The URL clients (benchmark, eval, the user) reach the deployment at."""
    return f"http://{ctx.address(layout.public_node)}:{layout.public_port}"


def _command(ctx: PlanContext, routers: RouterInput, port: int) -> FrontendCommand | None:
    kind: FrontendType = ctx.frontend
    match kind:
        case "dynamo":
            return dynamo_command(ctx, port)
        case "sglang-router":
            return sglang_router_command(ctx, routers, port)
        case "smg":
            return sglang_router_command(ctx, routers, port, frontend="smg")
        case "vllm-router":
            return vllm_router_command(ctx, routers, port)
        case "atomesh":
            return atomesh_command(ctx, routers, port)
        case "tilert-router":
            return tilert_router_command(ctx, routers, port)
        case "trtllm_serve":
            return trtllm_serve_command(ctx, routers, port)
        case "sglang" | "vllm" | "none":
            return None
        case _:
            assert_never(kind)


def _names(ctx: PlanContext, node: str, index: int) -> tuple[str, str]:
    match ctx.frontend:
        case "dynamo":
            return f"frontend_{index}", f"{node}_frontend_{index}.out"
        case "trtllm_serve":
            return "trtllm_serve_orchestrator", f"{node}_trtllm_serve_orchestrator.out"
        case _:
            family = ctx.frontend.replace("-", "_")
            return f"{family}_{index}", f"{node}_{ctx.frontend}_{index}.out"


def _probe(ctx: PlanContext, node: str, port: int) -> TcpProbe:
    health = ctx.recipe.health_check
    return TcpProbe(
        host=ctx.address(node),
        port=port,
        timeout_seconds=float(health.max_attempts * health.interval_seconds),
        interval_seconds=1.0,
    )


def _frontend_env(ctx: PlanContext) -> dict[str, str]:
    base: dict[str, str] = {}
    if ctx.frontend == "dynamo":
        base = discovery_env(ctx)
        base["DYN_REQUEST_PLANE"] = ctx.recipe.dynamo.request_plane
        base["DYN_SKIP_SGLANG_LOG_FORMATTING"] = "1"
        if ctx.recipe.dynamo.event_plane is not None:
            base["DYN_EVENT_PLANE"] = ctx.recipe.dynamo.event_plane
    return layer_env(
        base,
        otel_env(ctx, f"{ctx.recipe.name}-frontend"),
        ctx.recipe.environment,
        ctx.recipe.frontend.env or {},
    )


def build_frontends(
    ctx: PlanContext, routers: RouterInput, layout: FrontendLayout
) -> tuple[list[ProcessSpec], list[GeneratedFile]]:
    specs: list[ProcessSpec] = []
    files: dict[str, GeneratedFile] = {}
    frontend = ctx.recipe.frontend
    dynamo = ctx.frontend == "dynamo"
    image = frontend.container_image if not dynamo else None
    for index, (node, port) in enumerate(zip(layout.nodes, layout.ports, strict=True)):
        command = _command(ctx, routers, port)
        if command is None:
            continue
        for generated in command.files:
            files[generated.path] = generated
        name, log = _names(ctx, node, index)
        prefix: list[str] = []
        nsys = frontend_nsys(ctx, name) if dynamo else None
        if nsys is not None:
            prefix += nsys.prefix
        if frontend.numa_bind:
            prefix += ["numactl", "--cpunodebind=0", "--membind=0"]
        argv = (*prefix, *command.argv)
        env = _frontend_env(ctx)
        preamble = step_preamble(ctx, install=True, node=node) if dynamo else setup_script(ctx)
        if nsys is not None:
            preamble += nsys.preamble
        step = SrunStep(
            step_name=name,
            nodes=(node,),
            log_path=ctx.log_path(log),
            container=ctx.container(image),
            options=dict(ctx.recipe.srun_options),
            mpi="pmix" if dynamo or ctx.frontend == "trtllm_serve" else None,
            het_group=ctx.het_group(node),
            export_env={"ENROOT_REMAP_ROOT": "yes"} if dynamo and needs_root(ctx) else {},
        )
        task = wrap_command(
            argv, env=env, preamble=preamble, head=ctx.cluster.default_bash_preamble
        )
        specs.append(
            ProcessSpec(
                name=name,
                kind="frontend",
                role=ctx.frontend,
                index=index,
                nodes=(node,),
                ports={"http": port},
                env=env,
                argv=argv,
                preamble=preamble,
                srun_argv=() if ctx.local else render_srun(step, task, job_id=ctx.job_id),
                container=step.container,
                log_file=log,
                phase="frontends",
                readiness=_probe(ctx, node, port),
                stop_grace_seconds=max(
                    20.0 if dynamo else 10.0, nsys.stop_grace_seconds if nsys else 0.0
                ),
                stop_tier=0,
                het_group=ctx.het_group(node),
                profile=with_report(None, nsys, f"{ctx.in_log_dir}/profiles/frontend"),
            )
        )
    if layout.nginx_node is not None:
        specs.append(_nginx(ctx, layout, files))
    return specs, list(files.values())


def _nginx(
    ctx: PlanContext, layout: FrontendLayout, files: dict[str, GeneratedFile]
) -> ProcessSpec:
    frontend = ctx.recipe.frontend
    raise_ulimit = frontend.nginx_raise_ulimit or bool(ctx.cluster.nginx_raise_ulimit)
    upstreams = [(ctx.address(n), p) for n, p in zip(layout.nodes, layout.ports, strict=True)]
    conf = render_nginx_conf(
        frontend, upstreams, listen=layout.public_port, raise_ulimit=raise_ulimit
    )
    files[NGINX_CONFIG] = GeneratedFile(path=NGINX_CONFIG, content=conf)
    node = layout.public_node
    argv = nginx_argv(f"{ctx.in_log_dir}/{NGINX_CONFIG}", raise_ulimit=raise_ulimit)
    container = ctx.container(frontend.nginx_container, remap_root=True)
    step = SrunStep(
        step_name="nginx",
        nodes=(node,),
        log_path=ctx.log_path(f"{node}_nginx.out"),
        container=container,
        options=dict(ctx.recipe.srun_options),
        het_group=ctx.het_group(node),
    )
    return ProcessSpec(
        name="nginx",
        kind="proxy",
        role="nginx",
        nodes=(node,),
        ports={"http": layout.public_port},
        argv=argv,
        srun_argv=() if ctx.local else render_srun(step, argv, job_id=ctx.job_id),
        container=container,
        log_file=f"{node}_nginx.out",
        phase="frontends",
        readiness=_probe(ctx, node, layout.public_port),
        stop_tier=0,
        het_group=ctx.het_group(node),
    )


def health_gate(
    ctx: PlanContext,
    layout: FrontendLayout,
    routers: RouterInput,
    instances: dict[str, int] | None = None,
) -> HealthGate:
    """How the supervisor decides the deployment is ready: the frontend's health-gate family
    (``FRONTENDS[...].family``) and the expected worker counts.

    ``instances`` overrides the per-role count of registered instances (vLLM data parallelism
    registers one instance per node-local process or per DP rank, docs/planner.md#health-gate).
    """
    health = ctx.recipe.health_check
    base = public_url(ctx, layout)
    disaggregated = bool(routers.prefill or routers.decode)
    counts = instances or {}
    prefill = counts.get("prefill", len(routers.prefill))
    if disaggregated:
        decode = counts.get("decode", len(routers.decode))
    else:
        decode = counts.get("agg", len(routers.agg))
    family = FRONTENDS[ctx.frontend].family
    match family:
        case "dynamo":
            url = f"{base}/health"
        case "router":
            url = f"{base}/workers"
        case "trtllm_serve" | "direct":
            url, prefill, decode = f"{base}/health", 0, 0
        case "none":
            url, prefill, decode = "", 0, 0
        case _:
            assert_never(family)
    return HealthGate(
        family=family,
        url=url,
        expected_prefill=prefill,
        expected_decode=decode,
        model=ctx.served_model_name if family in ("dynamo", "direct") else "",
        max_attempts=health.max_attempts,
        interval_seconds=float(health.interval_seconds),
    )
