"""``srtctl dry-run``: the sbatch script and the complete JobPlan of every job; submits nothing."""

from __future__ import annotations

import sys

import click

from srt_cli.environment import Edge
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
  srtctl dry-run -f recipe.yaml
  srtctl dry-run -f recipe.yaml --set roles.agg.workers=2 --unset benchmark.concurrencies
  srtctl dry-run -f overrides.yaml:'*tp*'
  srtctl dry-run -f recipe.yaml --json | jq '.processes[].argv'
  srtctl dry-run -f recipe.yaml --stand-in-engines   # which engines a stand-in run replaces
"""


@click.command("dry-run", epilog=EPILOG)
@file_option()
@set_options
@output_option
@click.option("--sweep", is_flag=True, help="Treat the file as a sweep even without `sweep:`.")
@click.option("-y", "--yes", is_flag=True, hidden=True, help="Accepted for compatibility.")
@click.option(
    "--serve-only", is_flag=True, help="Plan without the benchmark (serve until stopped)."
)
@stand_in_option
@skip_flag_check_option
@json_option("Print each job's JobPlan as one JSON line instead of the text report.")
@click.pass_obj
def command(
    edge: Edge,
    *,
    files: tuple[str, ...],
    sets: tuple[str, ...],
    unsets: tuple[str, ...],
    output: str | None,
    sweep: bool,
    yes: bool,
    serve_only: bool,
    stand_in: bool,
    as_json: bool,
    skip_flag_check: bool,
) -> None:
    """Show what apply would submit: the sbatch script, then the JobPlan on a simulated node
    list sized to the request (node-01 ...): processes, GPUs and ports per node, services with
    placement, start phase, critical flag and why they are implied, mounts by source,
    environment by scope, and every command line. Sweeps and override files show every job.
    """
    from srt_cli.describe import describe_job
    from srt_cli.preflight import unknown_aliases
    from srt_cli.session import open_session

    session = open_session(
        edge,
        output=output,
        sets=sets,
        unsets=unsets,
        stand_in=stand_in,
        check_flags=not skip_flag_check,
    )
    sources = read_sources(files, sys.stdin)
    cluster = session.cluster

    def step(source: Source) -> None:
        planned = session.plan_source(source, serve_only=serve_only, force_sweep=sweep)
        if as_json:
            import msgspec

            for item in planned:
                click.echo(msgspec.json.encode(item.plan).decode())
            return
        if cluster.path is not None:
            click.echo(f"cluster config: {cluster.path}")
        else:
            click.echo("cluster config: none (no srtslurm.yaml found; using defaults)")
        for position, item in enumerate(planned, 1):
            header = f"[{position}/{len(planned)}] {item.job.label}: {item.job.name}"
            click.echo(describe_job(item, header=header))
            for finding in unknown_aliases(item, cluster.config):
                click.echo(
                    f"warning: {item.job.label}: {finding.field}: {finding.message}", err=True
                )

    for_each_source(sources, step)
