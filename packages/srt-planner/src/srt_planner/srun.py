"""srun argv construction (docs/planner.md#srun-steps).

``render_srun`` is the only place that knows srun's flag order. The container flags appear only
for container runtime ``pyxis``; with ``none`` the same step runs natively on the node.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence

import msgspec

from srt_planner.plan import ContainerSpec

__all__ = ["SrunStep", "merge_srun_options", "render_srun", "wrap_command"]


class SrunStep(msgspec.Struct, frozen=True, kw_only=True):
    """Everything srun needs besides the task command."""

    step_name: str
    nodes: tuple[str, ...]
    ntasks: int = 1
    log_path: str | None = None
    container: ContainerSpec | None = None
    options: dict[str, str] = {}
    mpi: str | None = None
    oversubscribe: bool = False
    cpu_bind: str | None = None
    cpus_per_task: int | None = None
    het_group: int | None = None
    export_env: dict[str, str] = {}
    #: Per-task host list (MPI endpoints with uneven ranks): ``--distribution=arbitrary``.
    task_hosts: tuple[str, ...] | None = None


def merge_srun_options(*layers: Mapping[str, str]) -> dict[str, str]:
    merged: dict[str, str] = {}
    for layer in layers:
        merged.update(layer)
    return merged


def wrap_command(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] = {},
    unset: Sequence[str] = (),
    preamble: Sequence[str] = (),
    head: str | None = None,
) -> tuple[str, ...]:
    """``bash -c "<head> && export K=V ... && unset -- K && <preamble> && exec <argv>"``.

    ``head`` is the cluster's ``default_bash_preamble``; ``preamble`` the step's own snippets.
    """
    parts = [head] if head else []
    parts += [f"export {key}={shlex.quote(value)}" for key, value in env.items()]
    if unset:
        parts.append("unset -- " + " ".join(unset))
    parts += preamble
    parts.append("exec " + shlex.join(argv))
    return ("bash", "-c", " && ".join(parts))


def render_srun(step: SrunStep, task: Sequence[str], *, job_id: str) -> tuple[str, ...]:
    """The full srun argv for ``step`` running ``task`` (already wrapped if it needs a shell)."""
    argv = ["srun", "--jobid", job_id, "--overlap"]
    if step.mpi:
        argv += ["--mpi", step.mpi]
    if step.oversubscribe:
        argv.append("--oversubscribe")
    if step.cpu_bind:
        argv.append(f"--cpu-bind={step.cpu_bind}")
    options = dict(step.options)
    hosts = step.task_hosts
    if hosts is not None:
        options.pop("distribution", None)
    else:
        argv += ["--nodes", str(len(step.nodes))]
    argv += ["--ntasks", str(step.ntasks)]
    if step.cpus_per_task is not None:
        argv += ["--cpus-per-task", str(step.cpus_per_task)]
    argv += ["--nodelist", ",".join(hosts if hosts is not None else step.nodes)]
    if step.het_group is not None:
        argv.append(f"--het-group={step.het_group}")
    if step.log_path:
        argv += ["--output", step.log_path]
    if step.container is not None:
        argv += [
            "--container-image",
            step.container.image,
            "--no-container-entrypoint",
            "--no-container-mount-home",
        ]
        if step.container.mounts:
            rendered = [
                f"{m.host}:{m.container}" + (":ro" if m.readonly else "")
                for m in step.container.mounts
            ]
            argv += ["--container-mounts", ",".join(rendered)]
        if step.container.remap_root:
            argv.append("--container-remap-root")
    if hosts is not None:
        argv.append("--distribution=arbitrary")
    for key in sorted(options):
        argv.append(f"--{key}={options[key]}" if options[key] else f"--{key}")
    argv.append(f"--job-name={step.step_name}")
    if step.export_env:
        exports = ",".join(f"{k}={v}" for k, v in sorted(step.export_env.items()))
        argv.append(f"--export=ALL,{exports}")
    return (*argv, *task)
