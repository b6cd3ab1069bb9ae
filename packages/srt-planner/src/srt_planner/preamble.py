"""Shell run inside a step before its program: setup script, Dynamo install and the worker
fingerprint capture (docs/planner.md#worker-environment, #container-preparation)."""

from __future__ import annotations

import shlex

from srt_planner.context import DEFAULT_DYNAMO_VERSION, PlanContext
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


#: The repository a ``dynamo.source`` with only ``rev`` installs from.
DYNAMO_GIT_URL = "https://github.com/ai-dynamo/dynamo.git"


def dynamo_install(ctx: PlanContext) -> tuple[str, ...]:
    """Install Dynamo once per container (flock + sentinel), only inside pyxis containers."""
    dynamo = ctx.recipe.dynamo
    if not (ctx.pyxis and ctx.dynamo_workers and dynamo.install):
        return ()
    source = dynamo.source
    if source is not None and source.wheel:
        install = f"pip install --break-system-packages --quiet {shlex.quote(source.wheel)}"
    elif source is not None and (source.git or source.rev):
        # `rev` alone means the upstream repository (docs/recipes.md#dynamo-rules); the pinned
        # `sha` (filled in by `srtctl apply`) wins over the ref name.
        repo = source.git or DYNAMO_GIT_URL
        ref = source.sha or source.rev or "HEAD"
        install = f"pip install --break-system-packages {shlex.quote(f'git+{repo}@{ref}')}"
    else:
        version = (source.pypi if source is not None else None) or DEFAULT_DYNAMO_VERSION
        install = (
            "pip install --break-system-packages --quiet --extra-index-url "
            f"https://pypi.nvidia.com ai-dynamo-runtime=={version} ai-dynamo=={version}"
        )
    lock = '"$SRT_DYN_PREFIX/.srt_dynamo_install'
    return (
        "SRT_DYN_PREFIX=\"$(python3 -c 'import sys; print(sys.prefix)' 2>/dev/null || "
        'echo "${HOME:-/root}")"',
        f'( flock -x 200; if [ ! -f {lock}.complete" ]; then {install} && '
        f'touch {lock}.complete"; fi ) 200>{lock}.lock"',
    )


def needs_root(ctx: PlanContext) -> bool:
    """Steps that install Dynamo run as root in the container (``ENROOT_REMAP_ROOT=yes``)."""
    return bool(dynamo_install(ctx))


def step_preamble(ctx: PlanContext, *, install: bool) -> tuple[str, ...]:
    return setup_script(ctx) + (dynamo_install(ctx) if install else ())


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
