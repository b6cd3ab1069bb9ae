"""Service sources: the checkout a service runs from (``services[].source``, ``build_command``,
``build_timeout_seconds``; docs/planner.md#services).

A service with a ``source`` gets one-shot steps at the start of its start phase, before any
service of that phase starts (``order`` below every service's):

1. ``service_<name>_clone`` (bare host, no container: git comes from the host): clone
   ``source.git`` into the job-owned folder ``<log_dir>/services/<name>/src`` and check out the
   pinned ``source.sha`` (or, when ``srtctl apply`` could not pin it, ``source.rev`` fetched by
   name), then verify ``HEAD``. Idempotent: a checkout already at the sha is kept; otherwise the
   clone goes to ``src.partial`` and is renamed only when complete. The log directory is on the
   shared filesystem, so one clone on the service's first node serves every node.
2. ``service_<name>_build`` (only with ``build_command``; in the service's container, with the
   service's environment): ``build_command`` in the run directory (the checkout, or
   ``source.path`` below it), killed by coreutils ``timeout`` after ``build_timeout_seconds``.

Every ``timeout`` runs with ``--foreground``: without it ``timeout`` moves into a process group
of its own, which a stop of the step (``srtctl cancel``, a failure elsewhere) would not reach.

Either step failing fails the job; its last log line names the service, the commit and the log.
The service then starts in the run directory (its preamble ``cd``s there, waiting up to 10 s for
the shared mount), and sees it as ``$SERVICE_SOURCE_DIR`` and the ``{source_dir}`` placeholder.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping

from srt_planner.context import PlanContext
from srt_planner.errors import PlanningError
from srt_planner.plan import ContainerSpec, ProcessSpec, StartPhase
from srt_planner.srun import SrunStep, merge_srun_options, render_srun, wrap_command
from srt_schema.recipe import ServiceConfig, SourceConfig

__all__ = [
    "CLONE_ORDER",
    "SOURCE_DIR_ENV",
    "build_source_steps",
    "checkout_dir",
    "run_dir",
    "source_preamble",
]

#: The environment variable naming the service's run directory.
SOURCE_DIR_ENV = "SERVICE_SOURCE_DIR"
#: ``order`` of the clone steps within a phase (the build steps follow at ``CLONE_ORDER + 1``);
#: services are numbered from 0, so both groups finish before the phase's first service starts.
CLONE_ORDER = -2
#: Bound on each git network command of the clone step (the reference's ``timeout 600s``).
GIT_TIMEOUT_SECONDS = 600
#: Seconds the supervisor grants a step beyond its own bound before killing it.
_SLACK_SECONDS = 60
_HEX = re.compile(r"^[0-9a-fA-F]{4,40}$")


def checkout_dir(log_dir: str, service: ServiceConfig) -> str:
    """The job-owned checkout of ``service`` under ``log_dir`` (as seen at ``log_dir``)."""
    return f"{log_dir.rstrip('/')}/services/{service.name}/src"


def _subdir(service: ServiceConfig, source: SourceConfig) -> str | None:
    path = source.path
    if path is None or path.strip("/") in ("", "."):
        return None
    parts = path.split("/")
    if path.startswith("/") or ".." in parts:
        raise PlanningError(
            f"$.services[{service.name}].source.path: {path!r} must be a relative directory "
            "inside the clone (no leading '/', no '..'); use e.g. 'router' or drop the key"
        )
    return path.strip("/")


def run_dir(log_dir: str, service: ServiceConfig) -> str:
    """Where the service's build and process run: the checkout, or ``source.path`` below it."""
    assert service.source is not None
    sub = _subdir(service, service.source)
    root = checkout_dir(log_dir, service)
    return f"{root}/{sub}" if sub else root


def source_preamble(directory: str) -> str:
    """``cd`` into ``directory``, waiting up to 10 s for it to appear on a shared mount."""
    quoted = shlex.quote(directory)
    return (
        f"for _ in 1 2 3 4 5 6 7 8 9 10; do [ -d {quoted} ] && break; sleep 1; done && cd {quoted}"
    )


def _want(service: ServiceConfig, source: SourceConfig) -> str:
    """The commit to check out: the pinned sha, else the rev (fetched by name)."""
    if source.sha is not None and not _HEX.match(source.sha):
        raise PlanningError(
            f"$.services[{service.name}].source.sha: {source.sha!r} is not a commit id (4 to 40 "
            "hex digits); remove it so srtctl apply pins source.rev, or write the full sha"
        )
    want = source.sha.lower() if source.sha is not None else source.rev
    if want.startswith("-") or not want.strip():
        raise PlanningError(
            f"$.services[{service.name}].source.rev: {source.rev!r} is not a git ref; use a "
            "commit sha, a tag or refs/pull/<n>/head"
        )
    return want


def _assign(**values: str) -> str:
    """``name=value`` shell assignments, every value quoted."""
    return " ".join(f"{key}={shlex.quote(value)}" for key, value in values.items())


#: Shell helpers of both steps: ``say`` and ``fail`` prefix the service, ``fail`` adds the commit
#: and the log and exits 1.
_HELPERS = (
    'say() { echo "srt: service $name: $1"; }',
    'fail() { say "$1 ($url at $want); log: $log"; exit 1; }',
)


def _clone_script(service: ServiceConfig, source: SourceConfig, dest: str, log: str) -> str:
    want = _want(service, source)
    sub = _subdir(service, source)
    git = f"timeout --foreground {GIT_TIMEOUT_SECONDS} git -c http.version=HTTP/1.1"
    lines = [
        _assign(name=service.name, url=source.git, want=want, dest=dest, log=log),
        # A relative log directory is relative to where the step starts (as srun's --output).
        'case "$dest" in /*) ;; *) dest="$PWD/$dest" ;; esac',
        *_HELPERS,
    ]
    if source.sha is not None:
        lines.append(
            'if [ -d "$dest/.git" ] && case "$(git -C "$dest" rev-parse HEAD 2>/dev/null)" in '
            '"$want"*) true ;; *) false ;; esac; then '
            'say "checkout $dest is already at $want; kept it"; exit 0; fi'
        )
    else:
        lines.append(
            'say "source.rev $want is not pinned to a sha (srtctl apply pins it); '
            'fetching it by name"'
        )
    lines += [
        'rm -rf "$dest" "$dest.partial" && mkdir -p "$(dirname "$dest")" '
        '|| fail "cannot create $dest"',
        'say "cloning $url at $want into $dest"',
        f'{git} clone --quiet --no-checkout --filter=blob:none -- "$url" "$dest.partial" '
        '|| fail "git clone failed"',
        'cd "$dest.partial" || fail "no clone at $dest.partial"',
        f'if {git} fetch --quiet origin -- "$want"; then ref=FETCH_HEAD; else ref="$want"; fi',
        'git -c advice.detachedHead=false checkout --quiet --detach "$ref" '
        '|| fail "commit $want is not in the repository"',
        'got=$(git rev-parse HEAD) || fail "git rev-parse failed"',
    ]
    if source.sha is not None:
        lines.append(
            'case "$got" in "$want"*) ;; *) fail "checked out $got, not the pinned sha" ;; esac'
        )
    if sub is not None:
        lines.append(
            f'sub={shlex.quote(sub)}; [ -d "$sub" ] '
            '|| fail "source.path $sub is not a directory of the checkout"'
        )
    lines += [
        'cd / && mv "$dest.partial" "$dest" || fail "cannot move the clone to $dest"',
        'say "checked out $got in $dest"',
    ]
    return "\n".join(lines)


def _build_script(
    service: ServiceConfig,
    source: SourceConfig,
    command: tuple[str, ...],
    directory: str,
    log: str,
) -> str:
    seconds = service.build_timeout_seconds
    values = {"dir": directory, "log": log, "cmd": shlex.join(command)}
    where = "at $want in $dir; log: $log"
    return "\n".join(
        [
            _assign(name=service.name, url=source.git, want=_want(service, source), **values),
            *_HELPERS,
            'cd "$dir" || fail "no checkout at $dir"',
            f'say "build_command $cmd {where}"',
            f"timeout --foreground --kill-after=10 {seconds} {shlex.join(command)}",
            "rc=$?",
            'if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then say "build_command timed out '
            f'after {seconds} s (build_timeout_seconds) {where}"; exit 124; fi',
            'if [ "$rc" -ne 0 ]; then say "build_command failed with exit code $rc '
            f'{where}"; exit "$rc"; fi',
            f'say "built {where}"',
        ]
    )


def build_source_steps(
    ctx: PlanContext,
    service: ServiceConfig,
    *,
    node: str,
    phase: StartPhase,
    env: Mapping[str, str],
    container: ContainerSpec | None,
) -> list[ProcessSpec]:
    """The clone (and build) steps of ``service``, run once on ``node`` before it starts."""
    source = service.source
    if source is None:
        return []
    if "/" in service.name or service.name in (".", ".."):
        raise PlanningError(
            f"$.services[{service.name}].name: names the checkout folder "
            f"services/<name>/src; a service with a source needs a name without '/'"
        )
    clone_name = f"service_{service.name}_clone"
    clone_log = f"{clone_name}.out"
    clone_argv = (
        "bash",
        "-c",
        _clone_script(service, source, checkout_dir(ctx.log_dir, service), ctx.log_path(clone_log)),
    )
    clone_env = {"GIT_TERMINAL_PROMPT": "0"}
    clone_step = SrunStep(
        step_name=clone_name,
        nodes=(node,),
        log_path=ctx.log_path(clone_log),
        het_group=ctx.het_group(node),
    )
    steps = [
        ProcessSpec(
            name=clone_name,
            kind="service",
            role=service.name,
            nodes=(node,),
            env=clone_env,
            argv=clone_argv,
            srun_argv=()
            if ctx.local
            else render_srun(
                clone_step, wrap_command(clone_argv, env=clone_env), job_id=ctx.job_id
            ),
            log_file=clone_log,
            phase=phase,
            order=CLONE_ORDER,
            critical=True,
            oneshot=True,
            timeout_seconds=float(2 * GIT_TIMEOUT_SECONDS + _SLACK_SECONDS),
            het_group=clone_step.het_group,
        )
    ]
    if service.build_command is None:
        return steps
    build_name = f"service_{service.name}_build"
    build_log = f"{build_name}.out"
    seen = ctx.in_log_dir if container is not None else ctx.log_dir
    build_argv = (
        "bash",
        "-c",
        _build_script(
            service, source, service.build_command, run_dir(seen, service), ctx.log_path(build_log)
        ),
    )
    build_step = SrunStep(
        step_name=build_name,
        nodes=(node,),
        log_path=ctx.log_path(build_log),
        container=container,
        options=merge_srun_options(ctx.recipe.srun_options, service.srun_options),
        cpus_per_task=service.cpus_per_task,
        cpu_bind=service.cpu_bind,
        het_group=ctx.het_group(node),
    )
    task = wrap_command(build_argv, env=env, head=ctx.cluster.default_bash_preamble)
    steps.append(
        ProcessSpec(
            name=build_name,
            kind="service",
            role=service.name,
            nodes=(node,),
            env=dict(env),
            argv=build_argv,
            srun_argv=() if ctx.local else render_srun(build_step, task, job_id=ctx.job_id),
            container=container,
            log_file=build_log,
            phase=phase,
            order=CLONE_ORDER + 1,
            critical=True,
            oneshot=True,
            timeout_seconds=float(service.build_timeout_seconds + _SLACK_SECONDS),
            het_group=build_step.het_group,
        )
    )
    return steps
