"""What goes into ``<output>/<job_id>/`` at submit time (docs/design.md#files-a-run-writes).

Pure builders (config text, metadata, lock) plus one writer. The runtime later adds logs, status
and the end-of-run part of ``recipe.lock.yaml``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from srt_cli.errors import CliUsageError

if TYPE_CHECKING:
    from srt_cli.planning import PlannedJob
    from srt_schema.cluster import ClusterConfig
    from srt_schema.job_files import JobRecord, SweepPointRef
    from srt_schema.load import LoadedJob

__all__ = [
    "build_lock",
    "build_metadata",
    "config_text",
    "redact",
    "write_atomic",
    "write_job_files",
]


def config_text(job: LoadedJob) -> str:
    """``config.yaml``: the one job's resolved recipe (variant, sweep point and --set applied),
    secrets redacted (the runtime takes them from ``srtslurm.yaml`` or the environment)."""
    from srt_schema.yamlio import dump_yaml

    return dump_yaml(redact(job.document))


def redact(node: Any) -> Any:
    """A copy fit to write: secret fields, secret-named keys and URL passwords replaced
    (:mod:`srt_schema.secrets`, the one table every writer reads)."""
    from srt_schema.secrets import redact_document

    return redact_document(node)


def build_metadata(
    planned: PlannedJob,
    *,
    job_id: str,
    generated_at: str,
    tags: Sequence[str],
    serve_only: bool,
    sweep_point: SweepPointRef | None = None,
) -> JobRecord:
    """``<job_id>.json`` (docs/recipes.md#job-record, roles in schema-2 terms;
    ``srt_schema.job_files.JobRecord``, the file's one definition)."""
    from srt_schema.job_files import JobBenchmark, JobModel, JobRecord, JobResources, JobRole

    recipe = planned.job.recipe
    return JobRecord(
        job_id=job_id,
        job_name=planned.request.job_name,
        generated_at=generated_at,
        model=JobModel(
            path=recipe.model.path,
            container=recipe.model.container,
            precision=recipe.model.precision,
        ),
        resources=JobResources(
            gpu_type=recipe.resources.gpu_type,
            gpus_per_node=recipe.resources.gpus_per_node,
            nodes=planned.request.nodes,
            roles={
                name: JobRole(nodes=role.nodes, workers=role.workers, gpus=role.gpus)
                for name, role in sorted(recipe.roles.items())
            },
        ),
        frontend_type=recipe.frontend.type,
        benchmark=JobBenchmark(
            type=recipe.benchmark.type, isl=recipe.benchmark.isl, osl=recipe.benchmark.osl
        ),
        serve_only=serve_only,
        tags=tuple(tags),
        sweep_point=sweep_point,
    )


def build_lock(
    job: LoadedJob,
    *,
    config: str,
    job_id: str,
    job_name: str,
    generated_at: str,
    cluster: ClusterConfig | None,
    cluster_path: str | None,
    pins: Sequence[str],
    srtctl_version: str,
    log_dir: str,
) -> str:
    """``recipe.lock.yaml`` at submit: the recipe (secrets redacted) plus a ``lock:`` block.

    ``lock.recipe_sha256`` is the SHA-256 of ``config.yaml`` exactly as written next to it.
    """
    import msgspec

    from srt_runtime.reporting.lock_sections import build_integrity
    from srt_schema.job_files import LockResolved, LockSlurm, LockSubmit
    from srt_schema.yamlio import dump_yaml

    recipe = job.recipe
    aliases: dict[str, str] = {}
    if cluster is not None:
        for alias, path in (cluster.model_paths or {}).items():
            if path == recipe.model.path:
                aliases[f"model_paths.{alias}"] = path
        for alias, image in (cluster.containers or {}).items():
            if image == recipe.model.container:
                aliases[f"containers.{alias}"] = image
    import hashlib  # apply only: kept off validate's and dry-run's start-up

    typed = LockSubmit(
        generated_at=generated_at,
        slurm=LockSlurm(job_id=job_id, job_name=job_name, srtctl_version=srtctl_version),
        resolved=LockResolved(
            model_path=recipe.model.path,
            container_path=recipe.model.container,
            log_dir=log_dir,
            aliases=aliases,
        ),
        cluster_config=cluster_path,
        recipe_sha256=hashlib.sha256(config.encode()).hexdigest(),
        pinned_sources=tuple(pins),
    )
    lock: dict[str, Any] = msgspec.to_builtins(typed)
    lock["integrity"] = build_integrity(lock)
    document = {**redact(job.document), "lock": lock}
    banner = (
        "# Lock section: written by srtctl apply; the job completes it at the end. Do not edit.\n"
        "# Reproduce: srtctl apply -f recipe.lock.yaml\n"
    )
    return banner + dump_yaml(document)


def link_logs(logs: Path, target: Path | None) -> None:
    """``logs`` as a folder, or as a link to ``target`` (``output.log_dir``)."""
    if target is None or target == logs:
        logs.mkdir(exist_ok=True)
        return
    if target.is_dir() and any(target.iterdir()):
        raise CliUsageError(
            f"output.log_dir {target} already holds files (another job's logs?); "
            "put {job_id} in output.log_dir so every job gets its own folder"
        )
    target.mkdir(parents=True, exist_ok=True)
    logs.symlink_to(target, target_is_directory=True)


def write_atomic(path: Path, text: str, mode: int = 0o644) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    tmp.chmod(mode)
    tmp.replace(path)


def write_job_files(
    folder: Path,
    files: Mapping[str, tuple[str, int]],
    *,
    logs: bool = True,
    logs_at: str | None = None,
) -> None:
    """Write ``name -> (text, mode)`` into ``folder`` (created, with ``logs/`` unless told not).

    ``logs_at``: the job's log directory when the recipe's ``output.log_dir`` moves it; it is
    created and ``folder/logs`` links to it. It must be new or empty (two jobs never share one).
    """
    folder.mkdir(parents=True, exist_ok=True)
    if logs:
        link_logs(folder / "logs", Path(logs_at) if logs_at else None)
    for name, (text, mode) in files.items():
        write_atomic(folder / name, text, mode)
