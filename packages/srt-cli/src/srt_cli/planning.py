"""From a loaded job to its sbatch script and its JobPlan (on simulated or real nodes).

Pure apart from the interpreter path the batch script calls, which the caller passes in.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from srt_cli.errors import translated

if TYPE_CHECKING:
    from srt_cli.environment import Edge
    from srt_planner.plan import AllocationRequest, JobPlan, StandIn
    from srt_planner.post_eval import EvalRequest
    from srt_schema.cluster import ClusterConfig
    from srt_schema.load import LoadedJob

__all__ = [
    "PlannedJob",
    "job_log_dir",
    "plan_one",
    "runtime_command",
    "simulated_nodes",
    "staging_dir",
]

#: The job id dry-run and validate plan with (the real one comes from Slurm).
DRY_RUN_JOB_ID = "0"


@dataclass(frozen=True)
class PlannedJob:
    job: LoadedJob
    request: AllocationRequest
    #: The batch script as every file and printout holds it (secrets redacted).
    script: str
    plan: JobPlan
    #: Folder the batch script copies the job's config from when it starts.
    staging: str
    #: Values the plan and the script hold redacted (srt_schema.secrets): they reach the job
    #: only through the environment of the process srtctl starts (sbatch, or the runtime here),
    #: never through a file; the runtime puts them back into the plan.
    secret_env: dict[str, str] = field(default_factory=dict)
    #: The batch script sbatch is given, on its stdin (never a file), when it differs from
    #: ``script``: an sbatch directive holds a credential; else None.
    submit_script: str | None = None


def simulated_nodes(count: int, prefix: str = "node-") -> tuple[str, ...]:
    """``node-01 .. node-NN`` (at least two digits, more when NN needs them)."""
    width = max(2, len(str(count)))
    return tuple(f"{prefix}{i:0{width}d}" for i in range(1, count + 1))


def staging_dir(output_base: str, name: str, config_text: str) -> str:
    """Content-addressed: the same config always stages to the same folder (deterministic)."""
    import hashlib

    digest = hashlib.sha256(config_text.encode()).hexdigest()[:12]
    return f"{output_base.rstrip('/')}/.staging/{name}-{digest}"


def runtime_command(python: str, *, staging: str) -> tuple[str, ...]:
    """What the batch script runs on the first node: copy the staged config, start the runtime.

    ``--serve-only`` reaches the runtime as ``SRTCTL_SERVE_ONLY=1`` in the script's environment.
    ``srtctl apply`` submits with ``--output=<staging>/sweep_%j.log`` (:func:`staged_output`): a
    job may start before srtctl has created ``<output>/<job_id>/logs/``, and Slurm does not create
    the folder of ``--output``. The script links that log to ``logs/sweep_<job_id>.log``.
    """
    run = f'exec {shlex.quote(python)} -m srt_runtime run --job-dir "$SRTCTL_OUTPUT_DIR"'
    copy = f'cp -n {shlex.quote(staging)}/*.yaml "$SRTCTL_OUTPUT_DIR"/ 2>/dev/null || true'
    staged = f"{shlex.quote(staging)}/sweep_$SLURM_JOB_ID.log"
    log = '"$SRTCTL_OUTPUT_DIR/logs/sweep_$SLURM_JOB_ID.log"'
    link = f"if [ -f {staged} ]; then ln -f {staged} {log} 2>/dev/null || ln -sf {staged} {log}; fi"
    return ("bash", "-c", f"{copy}; {link}; {run}")


def staged_output(staging: str) -> str:
    """The ``sbatch --output`` srtctl apply submits with: in the staging folder, which exists
    before submission (see :func:`runtime_command`)."""
    return f"{staging.rstrip('/')}/sweep_%j.log"


def job_log_dir(job: LoadedJob, *, output_base: str, job_id: str, edge: Edge | None) -> str:
    """The job's log directory: the job folder's ``logs/``, or the recipe's ``output.log_dir``
    (then ``<job>/logs`` links to it: :func:`srt_cli.jobfiles.write_job_files`)."""
    from srt_planner.log_dir import resolve_log_dir

    moved = resolve_log_dir(
        job.recipe.output.log_dir,
        job_id=job_id,
        run_name=f"{job.recipe.name}_{job_id}",
        environ=edge.environ if edge is not None else {},
        cwd=str(edge.cwd) if edge is not None else "/",
    )
    return moved or f"{output_base.rstrip('/')}/{job_id}/logs"


def plan_one(
    job: LoadedJob,
    cluster: ClusterConfig,
    *,
    output_base: str,
    python: str,
    config_text: str,
    runner_name: str | None = None,
    job_id: str = DRY_RUN_JOB_ID,
    nodes: tuple[str, ...] | None = None,
    addresses: dict[str, str] | None = None,
    serve_only: bool = False,
    environment: dict[str, str] | None = None,
    staging: str | None = None,
    eval_request: EvalRequest | None = None,
    edge: Edge | None = None,
    stand_in: StandIn | None = None,
) -> PlannedJob:
    """Allocation request, batch script and JobPlan of one job.

    ``nodes`` defaults to a simulated list sized to the request (``node-01`` ...).
    """
    import msgspec

    from srt_planner import plan_allocation, plan_job, render_sbatch
    from srt_planner.datasets import build_dataset_settings
    from srt_planner.plan import JobPlan
    from srt_planner.telemetry import TACHOMETER_INTERVAL
    from srt_schema.secrets import (
        redact_document,
        redact_text,
        secret_environment,
        secret_field_environment,
    )

    with translated(where=job.label):
        request = plan_allocation(job.recipe, cluster, runner_name=runner_name)
        staging = staging or staging_dir(output_base, job.name, config_text)
        env = dict(job.recipe.environment)
        env.update(environment or {})
        if serve_only:
            env["SRTCTL_SERVE_ONLY"] = "1"
        secret_env = secret_environment(env)
        script = render_sbatch(
            request,
            output_base=output_base,
            command=runtime_command(python, staging=staging),
            # a secret is not exported by the script: sbatch passes it on from its environment
            environment={k: v for k, v in env.items() if k not in secret_env},
        )
        granted = nodes if nodes is not None else simulated_nodes(request.nodes)
        groups = None
        if request.het:
            first = request.het[0].nodes
            groups = (granted[:first], granted[first:])
        log_dir = job_log_dir(job, output_base=output_base, job_id=job_id, edge=edge)
        plan = plan_job(
            job.recipe,
            cluster,
            granted,
            job_id,
            het_groups=groups,
            addresses=addresses,
            log_dir=log_dir,
            serve_only=serve_only,
            eval_request=eval_request,
            stand_in=stand_in,
            # where the job's downloads come from and go (the batch job inherits this shell's)
            datasets=build_dataset_settings(edge.environ if edge is not None else {}),
            scrape_interval_given=job.sets(*TACHOMETER_INTERVAL),
        )
    for process in plan.processes:
        secret_env.update(secret_environment(process.env))
    # plan.json holds the reporting secrets (recipe or srtslurm.yaml) as markers naming their
    # variable: the job gets each value in that variable (field over the shell, as written).
    secret_env.update(secret_field_environment(msgspec.to_builtins(plan)))
    written = msgspec.convert(redact_document(msgspec.to_builtins(plan)), JobPlan)
    # the script: an sbatch directive may hold a credential (srtslurm.yaml or recipe)
    shown = redact_text(script, frozenset(secret_env.values()))
    return PlannedJob(
        job=job,
        request=request,
        script=shown,
        plan=written,
        staging=staging,
        secret_env=secret_env,
        submit_script=script if shown != script else None,
    )
