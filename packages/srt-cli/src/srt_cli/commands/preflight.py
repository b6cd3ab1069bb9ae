"""``srtctl preflight``: model folders, images and telemetry binaries exist; submits nothing."""

from __future__ import annotations

import sys

import click

from srt_cli.environment import Edge
from srt_cli.errors import SlurmError
from srt_cli.inputs import Source, read_sources
from srt_cli.options import file_option, set_options
from srt_cli.runner import for_each_source

EPILOG = """\b
Examples:
  srtctl preflight -f recipe.yaml
  srtctl preflight -f overrides.yaml:override_tp8
  SRTSLURM_CONFIG=cluster-b/srtslurm.yaml srtctl preflight -f recipes/
"""


@click.command("preflight", epilog=EPILOG)
@file_option()
@set_options
@click.pass_obj
def command(
    edge: Edge, *, files: tuple[str, ...], sets: tuple[str, ...], unsets: tuple[str, ...]
) -> None:
    """Check, for every job, that model.path is a folder (or an hf:<repo> the hub resolves, when
    it can be reached: HF_ENDPOINT, HF_TOKEN), that container images
    are registry references or existing files (container runtime pyxis) and that telemetry
    binaries are on PATH (container runtime none). Exit 4 if anything is missing.
    """
    from srt_cli.preflight import check_job, preflight_path
    from srt_cli.session import open_session

    session = open_session(edge, output=None, sets=sets, unsets=unsets)
    sources = read_sources(files, sys.stdin)
    search_path = preflight_path(edge, session.python)

    def step(source: Source) -> None:
        failed = 0
        for planned in session.plan_source(source):
            findings = check_job(
                planned,
                session.cluster.config,
                search_path=search_path,
                python=session.python,
                environ=edge.environ,
            )
            fatal = any(f.fatal for f in findings)
            click.echo(f"{'✗' if fatal else '✓'} {planned.job.label}: {planned.job.name}")
            for finding in findings:
                note = (
                    ""
                    if finding.fatal
                    else finding.note or " (not critical; the job runs without it)"
                )
                click.echo(f"  {planned.job.label}: {finding.field}: {finding.message}{note}")
            failed += fatal
        if failed:
            raise SlurmError(f"{source.label}: preflight failed for {failed} job(s)")

    for_each_source(sources, step)
