"""The resource record of a run (``logs/resource_snapshot.json``, docs/planner.md#resource-record):
what CPUs the supervisor's node got, and a warning when there is less than one CPU per GPU."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import msgspec

from srt_planner.plan import JobPlan
from srt_runtime.files import write_atomic

__all__ = ["ResourceSnapshot", "build_resource_snapshot", "write_resource_snapshot"]


class ResourceSnapshot(msgspec.Struct, frozen=True, kw_only=True):
    node: str
    #: ``SLURM_JOB_CPUS_PER_NODE`` / ``SLURM_CPUS_ON_NODE`` as Slurm wrote them (None: unset).
    job_cpus_per_node: str | None
    cpus_on_node: str | None
    #: CPUs this process may run on (its affinity mask).
    affinity_cpus: int
    affinity: tuple[int, ...]
    #: GPUs the plan's engine workers use on this node.
    worker_gpus: int
    warning: str | None = None


def build_resource_snapshot(
    plan: JobPlan, node: str, environ: Mapping[str, str], affinity: Iterable[int]
) -> ResourceSnapshot:
    """The record for ``node`` (pure: the caller reads the environment and the affinity)."""
    cpus = tuple(sorted(affinity))
    gpus = sum(len(p.gpus) for p in plan.processes if p.kind == "worker" and node in p.nodes)
    warning = None
    if gpus > len(cpus):
        warning = (
            f"CPU ALLOCATION WARNING: {node} runs {gpus} worker GPUs on {len(cpus)} CPUs; ask "
            "Slurm for at least one CPU per GPU (e.g. sbatch_directives cpus-per-task)"
        )
    return ResourceSnapshot(
        node=node,
        job_cpus_per_node=environ.get("SLURM_JOB_CPUS_PER_NODE"),
        cpus_on_node=environ.get("SLURM_CPUS_ON_NODE"),
        affinity_cpus=len(cpus),
        affinity=cpus,
        worker_gpus=gpus,
        warning=warning,
    )


def write_resource_snapshot(log_dir: Path, snapshot: ResourceSnapshot) -> Path:
    path = log_dir / "resource_snapshot.json"
    write_atomic(path, msgspec.json.format(msgspec.json.encode(snapshot)) + b"\n")
    return path
