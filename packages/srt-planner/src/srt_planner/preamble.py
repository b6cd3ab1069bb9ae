"""Shell run inside a step before its program: setup script, Dynamo install (rendered by
srt_planner.dynamo_install) and the worker fingerprint capture (docs/planner.md#worker-environment,
#container-preparation, #dynamo-install)."""

from __future__ import annotations

import shlex

from srt_planner.context import PlanContext
from srt_planner.dynamo_install import install_preamble, plan_dynamo_install
from srt_planner.mounts import is_hf_model

__all__ = [
    "FINGERPRINT_SCRIPT",
    "dynamo_install",
    "fingerprint_capture",
    "fingerprint_file",
    "needs_root",
    "setup_script",
    "step_preamble",
]

#: Where the runtime writes the fingerprint capture script (relative to the log directory).
FINGERPRINT_SCRIPT = "srt_fingerprint.py"
#: Seconds the capture may take before the worker starts without it.
FINGERPRINT_TIMEOUT = 60


def setup_script(ctx: PlanContext) -> tuple[str, ...]:
    name = ctx.recipe.setup_script
    if not name:
        return ()
    path = shlex.quote(f"/configs/{name}")
    fallback = shlex.quote(f"/configs/patches/{name}")
    return (
        f"if [ -f {path} ]; then bash {path}; elif [ -f {fallback} ]; then bash {fallback}; "
        f"else echo 'setup script {name} not found; continuing'; fi",
    )


def dynamo_install(ctx: PlanContext, node: str) -> tuple[str, ...]:
    """Install Dynamo on ``node`` before the step's program (srt_planner.dynamo_install)."""
    return install_preamble(ctx, node)


def needs_root(ctx: PlanContext) -> bool:
    """Steps that install Dynamo into their container run as root in it
    (``ENROOT_REMAP_ROOT=yes``); an off-container install goes to a job-owned folder."""
    install = plan_dynamo_install(ctx)
    return install is not None and install.mode == "container"


def step_preamble(ctx: PlanContext, *, install: bool, node: str) -> tuple[str, ...]:
    return setup_script(ctx) + (dynamo_install(ctx, node) if install else ())


def fingerprint_file(role: str, index: int) -> str:
    """``fingerprint_<mode>_w<index>.json``, relative to the log directory."""
    return f"fingerprint_{role}_w{index}.json"


def fingerprint_capture(ctx: PlanContext, role: str, index: int) -> tuple[str, ...]:
    """Capture the worker's host, GPUs, frameworks and model identity before the engine starts.

    Never fatal: a failing or hung capture (bounded by ``timeout``) prints one line to the
    worker's log and the engine starts anyway. Only task 0 of a step captures (MPI endpoints run
    the preamble in every rank).
    """
    argv = [
        ctx.python,
        f"{ctx.in_log_dir}/{FINGERPRINT_SCRIPT}",
        f"{ctx.in_log_dir}/{fingerprint_file(role, index)}",
    ]
    if not is_hf_model(ctx.recipe.model.path):
        argv.append(ctx.model_arg)
    return (
        f'{{ [ "${{SLURM_PROCID:-0}}" != 0 ] || timeout {FINGERPRINT_TIMEOUT} '
        f"{shlex.join(argv)} || echo 'srt: fingerprint capture failed (ignored)' >&2; }}",
    )
