"""Command lines of each frontend family (docs/planner.md#frontends)."""

from __future__ import annotations

from typing import Any

import msgspec

from srt_planner._yaml import dump_yaml
from srt_planner.context import PlanContext
from srt_planner.engines.base import WorkerProcess
from srt_planner.frontends.base import RouterInput
from srt_planner.plan import GeneratedFile
from srt_schema.registry import FRONTENDS

__all__ = [
    "FrontendCommand",
    "atomesh_command",
    "dynamo_command",
    "sglang_router_command",
    "tilert_router_command",
    "trtllm_serve_command",
    "vllm_router_command",
]

ROUTER_POLICY_FILE = "router_policy_config.yaml"
SER_FILE = "ser.yaml"


class FrontendCommand(msgspec.Struct, frozen=True, kw_only=True):
    argv: tuple[str, ...]
    files: tuple[GeneratedFile, ...] = ()


def frontend_args(args: dict[str, Any] | None) -> list[str]:
    """``frontend.args``: ``true`` -> ``--k``; ``false``/``null`` skipped; else ``--k v``."""
    out: list[str] = []
    for key, value in (args or {}).items():
        if value is None or value is False:
            continue
        out += [f"--{key}"] if value is True else [f"--{key}", str(value)]
    return out


def _program(ctx: PlanContext, frontend: str) -> list[str]:
    """The start of a frontend's argv: the program ``FRONTENDS`` says it launches."""
    info = FRONTENDS[frontend]
    program = [ctx.python, "-m", info.program] if info.module else [info.program]
    return [*program, *info.subcommand]


def _url(ctx: PlanContext, proc: WorkerProcess) -> str:
    args = ctx.recipe.roles[proc.endpoint.role].args
    scheme = "grpc" if args.get("grpc-mode") or args.get("grpc_mode") else "http"
    return f"{scheme}://{ctx.address(proc.node)}:{proc.ports.get('http', 0)}"


def dynamo_command(ctx: PlanContext, port: int) -> FrontendCommand:
    argv = [*_program(ctx, "dynamo"), f"--http-port={port}"]
    files: tuple[GeneratedFile, ...] = ()
    selection = ctx.recipe.frontend.worker_selection
    if selection is not None:
        files = (
            GeneratedFile(
                path=ROUTER_POLICY_FILE, content=dump_yaml({"worker_selection": selection})
            ),
        )
        argv += ["--router-policy-config", f"{ctx.in_log_dir}/{ROUTER_POLICY_FILE}"]
    argv += frontend_args(ctx.recipe.frontend.args)
    return FrontendCommand(argv=tuple(argv), files=files)


def sglang_router_command(
    ctx: PlanContext, routers: RouterInput, port: int, *, frontend: str = "sglang-router"
) -> FrontendCommand:
    """The SGLang Model Gateway router; SMG (``frontend="smg"``) takes the same arguments."""
    argv = _program(ctx, frontend)
    if routers.prefill or routers.decode:
        argv.append("--pd-disaggregation")
        for proc in routers.prefill:
            argv += ["--prefill", _url(ctx, proc), str(proc.ports.get("bootstrap", 0))]
        for proc in routers.decode:
            argv += ["--decode", _url(ctx, proc)]
    else:
        argv += ["--worker-urls", *(_url(ctx, proc) for proc in routers.agg)]
    argv += ["--host", "0.0.0.0", "--port", str(port)]
    argv += frontend_args(ctx.recipe.frontend.args)
    return FrontendCommand(argv=tuple(argv))


def vllm_router_command(ctx: PlanContext, routers: RouterInput, port: int) -> FrontendCommand:
    argv = _program(ctx, "vllm-router")
    if routers.prefill or routers.decode:
        argv.append("--vllm-pd-disaggregation")
        for proc in routers.prefill:
            argv += ["--prefill", _url(ctx, proc), str(proc.ports.get("nixl", 0))]
        for proc in routers.decode:
            argv += ["--decode", _url(ctx, proc)]
    else:
        argv += ["--worker-urls", *(_url(ctx, proc) for proc in routers.agg)]
    argv += ["--host", "0.0.0.0", "--port", str(port)]
    args = dict(ctx.recipe.frontend.args or {})
    if "worker-startup-timeout-secs" not in args:
        health = ctx.recipe.health_check
        args["worker-startup-timeout-secs"] = health.max_attempts * health.interval_seconds
    argv += frontend_args(args)
    return FrontendCommand(argv=tuple(argv))


def _static_router(
    ctx: PlanContext, frontend: str, routers: RouterInput, port: int
) -> FrontendCommand:
    argv = _program(ctx, frontend)
    for proc in routers.prefill:
        argv += ["--prefill", _url(ctx, proc)]
    for proc in routers.decode:
        argv += ["--decode", _url(ctx, proc)]
    for proc in routers.agg:
        argv += ["--worker", _url(ctx, proc)]
    argv += ["--host", "0.0.0.0", "--port", str(port)]
    argv += frontend_args(ctx.recipe.frontend.args)
    return FrontendCommand(argv=tuple(argv))


def atomesh_command(ctx: PlanContext, routers: RouterInput, port: int) -> FrontendCommand:
    return _static_router(ctx, "atomesh", routers, port)


def tilert_router_command(ctx: PlanContext, routers: RouterInput, port: int) -> FrontendCommand:
    return _static_router(ctx, "tilert-router", routers, port)


def trtllm_serve_command(ctx: PlanContext, routers: RouterInput, port: int) -> FrontendCommand:
    """The disaggregated orchestrator and its ``ser.yaml``."""
    frontend = ctx.recipe.frontend
    context: dict[str, Any] = {
        "num_instances": len(routers.prefill),
        "urls": [f"{ctx.address(p.node)}:{p.ports.get('http', 0)}" for p in routers.prefill],
    }
    if frontend.ctx_router:
        context["router"] = frontend.ctx_router
    generation: dict[str, Any] = {
        "num_instances": len(routers.decode),
        "urls": [f"{ctx.address(p.node)}:{p.ports.get('http', 0)}" for p in routers.decode],
    }
    if frontend.gen_router:
        generation["router"] = frontend.gen_router
    config: dict[str, Any] = {
        "hostname": "0.0.0.0",
        "port": port,
        "context_servers": context,
        "generation_servers": generation,
    }
    config.update(frontend.server_config_extra or {})
    argv = [*_program(ctx, "trtllm_serve"), "disaggregated"]
    argv += ["--config", f"{ctx.in_log_dir}/{SER_FILE}"]
    argv += frontend_args(frontend.args)
    return FrontendCommand(
        argv=tuple(argv), files=(GeneratedFile(path=SER_FILE, content=dump_yaml(config)),)
    )
