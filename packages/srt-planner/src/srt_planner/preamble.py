"""Shell run inside a step before its program: setup script and Dynamo install (§5.8)."""

from __future__ import annotations

import shlex

from srt_planner.context import DEFAULT_DYNAMO_VERSION, PlanContext

__all__ = ["dynamo_install", "needs_root", "setup_script", "step_preamble"]


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
        # `rev` alone means the upstream repository (cli-and-config.md §3.11.4); the pinned
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
