"""``srtctl apply``: submit every job of a recipe to Slurm, or run it here (local launcher)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import click

from srt_cli.environment import Edge
from srt_cli.errors import EXIT_SLURM, CliError, CliUsageError, SlurmError
from srt_cli.inputs import Source, read_sources
from srt_cli.options import (
    file_option,
    json_option,
    output_option,
    set_options,
    skip_flag_check_option,
    stand_in_option,
)
from srt_cli.runner import for_each_source

EPILOG = """\b
Examples:
  srtctl apply -f recipe.yaml
  srtctl apply -f overrides.yaml:'*tp*' --tags nightly,h100 --json
  srtctl apply -f recipe.yaml --set benchmark.concurrencies=[8,16] -o /shared/outputs
  srtctl apply -f recipe.yaml --local          # run here, without Slurm
  srtctl apply -f recipe.yaml --local --stand-in-engines   # the recipe's own plan, no GPU

\b
Resuming a sweep (only the points without a valid result run again):
  srtctl apply --resume outputs/sweeps/my-sweep-20261202T101500Z
  srtctl apply -f sweep.yaml --resume          # the same sweep again, in ./outputs
"""

RESUME_HELP = (
    "Run only the points of the sweep (or the jobs of the recipe) without a valid result: no job "
    "yet, failed, cancelled, no rollup, or an invalid rollup; reuse every valid one. A table of "
    "each point, its job folder and the reason is printed first. SWEEP_DIR is the sweep folder "
    "apply printed (<output>/sweeps/<name>-<time>/): without -f the sweep is applied as it was "
    "(recipe, --set, --stand-in-engines); without SWEEP_DIR, -f is required and the earlier jobs "
    "are looked for in the output folder (-o). Points are matched by their resolved recipe, not "
    "by position (docs/recipes.md#resuming-a-sweep)."
)


def _tags(raw: str | None) -> list[str]:
    return [t.strip() for t in (raw or "").split(",") if t.strip()]


@click.command("apply", epilog=EPILOG)
@file_option(required=False)
@set_options
@output_option
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation (apply never asks).")
@click.option("--sweep", is_flag=True, help="Treat the file as a sweep even without `sweep:`.")
@click.option("--tags", metavar="A,B", help="Comma-separated tags stored with each job.")
@click.option("--serve-only", is_flag=True, help="Start the deployment and serve; no benchmark.")
@click.option("--no-preflight", is_flag=True, help="Skip the model/image/binary checks.")
@click.option("--local", "force_local", is_flag=True, help="Run here with the local launcher.")
@click.option("--slurm", "force_slurm", is_flag=True, help="Submit with sbatch (the default).")
@stand_in_option
@click.option(
    "--resume",
    "resume",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[SWEEP_DIR]",
    help=RESUME_HELP,
)
@skip_flag_check_option
@json_option("One JSON line per submission on stdout; everything else goes to stderr.")
@click.pass_obj
def command(
    edge: Edge,
    *,
    files: tuple[str, ...],
    sets: tuple[str, ...],
    unsets: tuple[str, ...],
    output: str | None,
    yes: bool,
    sweep: bool,
    tags: str | None,
    serve_only: bool,
    no_preflight: bool,
    force_local: bool,
    force_slurm: bool,
    stand_in: bool,
    resume: str | None,
    as_json: bool,
    skip_flag_check: bool,
) -> None:
    """Validate, plan, preflight and submit one Slurm job per sweep point or override variant,
    writing <output>/<job_id>/ (config.yaml, sbatch_script.sh, <job_id>.json, recipe.lock.yaml).

    With no sbatch on PATH and no srtslurm.yaml (or with --local) the job runs here, in the
    foreground, with the local launcher and no containers.

    --stand-in-engines runs (or submits) the recipe's own plan with only the GPU engines
    replaced by stand-ins; dry-run --stand-in-engines shows which processes are replaced and by
    what. A frontend that cannot be installed without GPUs is refused, not faked.

    --resume starts only the sweep points without a valid result and reuses the others, after a
    table of every point and why. A local sweep stopped by Ctrl-C/SIGTERM starts no further
    point; apply says how to resume it.
    """
    from srt_cli.applying import Applier
    from srt_cli.resuming import Resumer
    from srt_cli.session import open_session

    if force_local and force_slurm:
        raise CliUsageError("choose either --local or --slurm, not both")
    if serve_only and sweep:
        raise CliUsageError("--serve-only does not support sweeps")
    if serve_only and resume is not None:
        raise CliUsageError("--serve-only does not resume; drop --resume")
    sweep_dir = Path(resume) if resume else None
    recorded = None
    if sweep_dir is not None:
        from srt_cli.resume_io import find_sweep_folder, read_sweep_source

        sweep_dir, jobs_base = find_sweep_folder(edge.cwd / sweep_dir)
        if output is not None and (edge.cwd / output).resolve() != jobs_base:
            raise CliUsageError(
                f"--resume {resume}: its jobs are in {jobs_base}, not in -o {output}; drop -o"
            )
        output = str(jobs_base)
        if not files:
            if sets or unsets:
                raise CliUsageError(
                    f"--resume {resume} without -f applies the sweep as it was; to change it, "
                    "pass the recipe too: -f RECIPE.yaml --set ... --resume SWEEP_DIR"
                )
            recorded = read_sweep_source(sweep_dir)
            sets, unsets = recorded.sets or (), recorded.unsets
            stand_in = stand_in or recorded.stand_in
            sweep = sweep or recorded.force_sweep
    elif not files:
        raise CliUsageError(
            "missing -f/--file: name a recipe (or --resume SWEEP_DIR to resume a sweep)"
        )
    session = open_session(
        edge,
        output=output,
        sets=sets,
        unsets=unsets,
        stand_in=stand_in,
        check_flags=not skip_flag_check,
    )
    if recorded is not None:
        from srt_cli.resume_io import source_from

        assert sweep_dir is not None
        sources = [source_from(recorded, sweep_dir)]
    else:
        sources = read_sources(files, sys.stdin)
    if serve_only and len(sources) != 1:
        raise CliUsageError("--serve-only expects a single config file, not a directory")
    say = _prose(as_json)
    path = edge.environ.get("PATH", os.defpath)
    sbatch = shutil.which("sbatch", path=path)
    config = session.cluster.config
    if force_local or (not force_slurm and config is not None and config.launcher == "local"):
        local = True
    elif force_slurm or sbatch is not None:
        local = False
    elif session.cluster.path is None:
        local = True
        say("no sbatch on PATH and no srtslurm.yaml: running the job here (local launcher)")
    else:
        raise SlurmError(
            f"sbatch is not on PATH, but {session.cluster.path} describes a Slurm cluster; run "
            "srtctl on a login node, or pass --local to run here"
        )
    if not local and sbatch is None:
        raise SlurmError("sbatch is not on PATH; install the Slurm client or pass --local")
    applier = Applier(
        session=session,
        sbatch=sbatch or "sbatch",
        local=local,
        tags=_tags(tags),
        serve_only=serve_only,
        preflight=not no_preflight,
        emit=_emitter(as_json),
        say=say,
        resumer=Resumer(
            session=session,
            say=say,
            emit=_emitter(as_json),
            resume=resume is not None,
            sweep_dir=sweep_dir,
            sets=sets,
            unsets=unsets,
            force_sweep=sweep,
        ),
    )
    errors: list[str] = []

    def step(source: Source) -> None:
        applier.apply_source(source, force_sweep=sweep)

    def report(source: Source, exc: CliError) -> None:
        errors.append(source.label)
        if as_json:
            record = {"status": "error", "file": source.label, "error": exc.format_message()}
            click.echo(json.dumps(record))
        exc.show()

    try:
        for_each_source(sources, step, on_error=report)
    finally:
        if as_json and not applier.records and not errors:
            click.echo(json.dumps({"status": "no-submissions"}))
    if applier.local_failures:
        raise click.exceptions.Exit(EXIT_SLURM)


def _prose(as_json: bool) -> Any:
    def say(message: str) -> None:
        click.echo(message, err=as_json)

    return say


def _emitter(as_json: bool) -> Any:
    def emit(record: dict[str, Any]) -> None:
        if as_json:
            click.echo(json.dumps(record))

    return emit
