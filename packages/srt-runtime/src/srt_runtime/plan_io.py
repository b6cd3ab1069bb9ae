"""Reading and writing ``plan.json`` (the JobPlan the run executes)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import msgspec

from srt_planner import PlannerError, expand_hostlist, plan_job
from srt_planner.datasets import build_dataset_settings
from srt_planner.flagcheck import FLAG_CHECK_ENV
from srt_planner.plan import JobPlan, StandIn
from srt_planner.post_eval import build_eval_request
from srt_planner.stand_in import STAND_IN_ENV
from srt_planner.telemetry import TACHOMETER_INTERVAL
from srt_runtime.errors import PlanLoadError
from srt_runtime.facts import read_facts
from srt_runtime.files import write_atomic
from srt_schema import ClusterConfig, SchemaError, load_recipe_text, parse_set
from srt_schema.discovery import find_cluster_config, read_cluster_config
from srt_schema.secrets import redact_document, restore_document

__all__ = ["plan_from_job_dir", "read_plan", "restore_plan", "write_plan"]


def restore_plan(plan: JobPlan, environ: Mapping[str, str]) -> JobPlan:
    """The plan with the secrets ``plan.json`` holds redacted put back from ``environ`` (the
    environment srtctl started this job with; srt_schema.secrets.restore_document)."""
    restored = restore_document(msgspec.to_builtins(plan), environ)
    return msgspec.convert(restored, JobPlan)


def read_plan(path: Path, environ: Mapping[str, str] | None = None) -> JobPlan:
    """Decode ``path`` as a JobPlan, secrets restored from ``environ`` (default: this process's
    environment); the error names the file and the JSON path."""
    try:
        plan = msgspec.json.decode(path.read_bytes(), type=JobPlan)
    except FileNotFoundError as exc:
        raise PlanLoadError(f"{path}: no such plan file; pass --plan <plan.json>") from exc
    except msgspec.ValidationError as exc:
        raise PlanLoadError(f"{path}: not a valid JobPlan: {exc}") from exc
    except msgspec.DecodeError as exc:
        raise PlanLoadError(f"{path}: not JSON: {exc}") from exc
    return restore_plan(plan, os.environ if environ is None else environ)


def write_plan(plan: JobPlan, path: Path) -> None:
    """``plan.json`` with every secret redacted (srt_schema.secrets)."""
    written = redact_document(msgspec.to_builtins(plan))
    write_atomic(path, msgspec.json.format(msgspec.json.encode(written)) + b"\n")


def _log_dir(job_dir: Path) -> str:
    """``<job>/logs``, or where it links to when the recipe's ``output.log_dir`` moved it."""
    logs = job_dir / "logs"
    return str(logs.resolve()) if logs.is_symlink() else str(logs)


def plan_from_job_dir(
    job_dir: Path, environ: Mapping[str, str], *, cwd: Path, serve_only: bool = False
) -> JobPlan:
    """Plan the job in its allocation: ``read_facts(environ)`` once, the recipe the job was
    submitted with (``job_dir/config.yaml``), the cluster config, RUN_EVAL / EVAL_ONLY from
    ``environ``, the stand-in mode (``SRTCTL_STAND_IN_MODEL``), then ``plan_job``."""
    facts = read_facts(environ)
    config = job_dir / "config.yaml"
    try:
        text = config.read_text()
    except FileNotFoundError as exc:
        raise PlanLoadError(
            f"{config}: the job directory has no config.yaml (srtctl writes it at submit)"
        ) from exc
    overrides = (parse_set(f"setup_script={facts.setup_script}"),) if facts.setup_script else ()
    try:
        found = find_cluster_config(cwd, environ)
        cluster = read_cluster_config(found) if found is not None else ClusterConfig()
        jobs = load_recipe_text(text, file=str(config), cluster=cluster, overrides=overrides)
        if len(jobs) != 1:
            raise PlanLoadError(
                f"{config}: yields {len(jobs)} jobs; a job directory holds one resolved job"
            )
        het = tuple(expand_hostlist(g) for g in facts.het_groups) or None
        # The local launcher runs every node's processes on this host: reach them on loopback.
        local = cluster.launcher == "local"
        addresses = {n: "127.0.0.1" for n in expand_hostlist(facts.nodelist)} if local else None
        planned = plan_job(
            jobs[0].recipe,
            cluster,
            facts.nodelist,
            facts.job_id,
            het_groups=het,
            addresses=addresses,
            log_dir=_log_dir(job_dir),
            serve_only=serve_only,
            eval_request=build_eval_request(environ),
            # `srtctl apply --stand-in-engines` exports the stand-in model folder
            stand_in=StandIn(model=environ[STAND_IN_ENV]) if environ.get(STAND_IN_ENV) else None,
            datasets=build_dataset_settings(environ),
            scrape_interval_given=jobs[0].sets(*TACHOMETER_INTERVAL),
        )
        # what srtctl's flag check did before submitting (docs/flag-check.md)
        check = environ.get(FLAG_CHECK_ENV)
        if check in {"checked", "skipped"}:
            planned = msgspec.structs.replace(planned, flag_check=check)
    except (SchemaError, PlannerError) as exc:
        raise PlanLoadError(f"cannot plan job {facts.job_id} from {config}: {exc}") from exc
    # config.yaml holds secrets redacted; sbatch passed them on in the environment
    return restore_plan(planned, environ)
