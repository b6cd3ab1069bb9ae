"""The ``post_eval`` process: the accuracy evaluation after (RUN_EVAL) or instead of (EVAL_ONLY)
the benchmark (docs/telemetry-and-bench.md#post-eval, docs/planner.md#services).

Which mode a job is in comes from the job's environment; the edge turns it into an
:class:`EvalRequest` with :func:`build_eval_request` (a pure function of the mapping it is given)
and hands it to ``plan_job``. Variables named in ``post_eval.passthrough_env`` (and the built-in
list) are not copied into the plan: the eval step inherits the job's environment like every
other step, so their values, tokens included, never land in ``plan.json`` or an srun line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import msgspec

from srt_planner.benchmark import render_run_config
from srt_planner.context import PlanContext
from srt_planner.frontends import FrontendLayout, public_url
from srt_planner.plan import GeneratedFile, ProcessSpec
from srt_planner.srun import SrunStep, render_srun, wrap_command
from srt_schema.recipe import BenchmarkConfig
from srt_schema.validate.benchmark_rules import parse_concurrencies

__all__ = [
    "EVAL_CONFIG",
    "EVAL_LOG",
    "INFMAX_WORKSPACE",
    "EvalMode",
    "EvalRequest",
    "build_eval_argv",
    "build_eval_request",
    "build_post_eval",
]

EvalMode = Literal["none", "run_eval", "eval_only"]
#: The InferenceMAX workspace as the eval sees it (``{infmax_workspace}``).
INFMAX_WORKSPACE = "/infmax-workspace"
#: The srt-bench config of the built-in lm-eval runner (relative to the log directory).
EVAL_CONFIG = "eval.json"
EVAL_LOG = "eval.out"


class EvalRequest(msgspec.Struct, frozen=True, kw_only=True):
    """What the job's environment asks for: the mode, and ``EVAL_CONC`` if it is set."""

    mode: EvalMode = "none"
    eval_conc: str | None = None


def _flag(environ: Mapping[str, str], name: str) -> bool:
    return environ.get(name, "").strip().lower() in ("true", "1")


def build_eval_request(environ: Mapping[str, str]) -> EvalRequest:
    """``EVAL_ONLY=true`` (the eval replaces the benchmark and is the job's result) wins over
    ``RUN_EVAL=true`` (after a benchmark that exited 0; a failure only warns)."""
    mode: EvalMode = "none"
    if _flag(environ, "EVAL_ONLY"):
        mode = "eval_only"
    elif _flag(environ, "RUN_EVAL"):
        mode = "run_eval"
    return EvalRequest(mode=mode, eval_conc=environ.get("EVAL_CONC") or None)


def build_eval_argv(command: tuple[str, ...], *, endpoint: str) -> tuple[str, ...]:
    """``post_eval.command`` with ``{endpoint}`` and ``{infmax_workspace}`` replaced in every
    element (nothing else; not shell-interpreted)."""
    return tuple(
        arg.replace("{endpoint}", endpoint).replace("{infmax_workspace}", INFMAX_WORKSPACE)
        for arg in command
    )


def _eval_conc(ctx: PlanContext, request: EvalRequest) -> str | None:
    if request.eval_conc:
        return request.eval_conc
    # The recipe was validated when it loaded, so its concurrencies parse.
    levels = parse_concurrencies(ctx.recipe.benchmark.concurrencies)
    return str(max(levels)) if levels else None


def build_post_eval(
    ctx: PlanContext, layout: FrontendLayout, request: EvalRequest
) -> tuple[list[ProcessSpec], list[GeneratedFile]]:
    """The eval step on the head node (none when the environment asks for no eval)."""
    if request.mode == "none":
        return [], []
    endpoint = public_url(ctx, layout)
    files: list[GeneratedFile] = []
    command = ctx.recipe.post_eval.command
    if command is not None:
        argv = build_eval_argv(command, endpoint=endpoint)
    else:
        # The built-in runner: srt-bench's lm-eval type against the deployment.
        lm_eval = render_run_config(ctx, BenchmarkConfig(type="lm-eval"), endpoint, total_gpus=0)
        files.append(GeneratedFile(path=EVAL_CONFIG, content=lm_eval))
        argv = ("srt-bench", "run", "--config", f"{ctx.in_log_dir}/{EVAL_CONFIG}")
    env = dict(ctx.recipe.environment)
    env["MODEL_NAME"] = ctx.served_model_name
    conc = _eval_conc(ctx, request)
    if conc is not None:
        env["EVAL_CONC"] = conc
    node = ctx.carving.head
    container = ctx.container()
    step = SrunStep(
        step_name="post_eval",
        nodes=(node,),
        log_path=ctx.log_path(EVAL_LOG),
        container=container,
        options=dict(ctx.recipe.srun_options),
        het_group=ctx.het_group(node),
    )
    task = wrap_command(argv, env=env, head=ctx.cluster.default_bash_preamble)
    eval_only = request.mode == "eval_only"
    spec = ProcessSpec(
        name="post_eval",
        kind="benchmark",
        role="eval",
        nodes=(node,),
        env=env,
        argv=argv,
        srun_argv=() if ctx.local else render_srun(step, task, job_id=ctx.job_id),
        container=container,
        log_file=EVAL_LOG,
        phase="post_eval",
        # EVAL_ONLY: the eval is the job's result; RUN_EVAL: a failure only warns.
        critical=eval_only,
        oneshot=True,
        stop_grace_seconds=15.0,
        stop_tier=0,
        het_group=step.het_group,
    )
    return [spec], files
