"""``srtctl preflight``: model folders, images and telemetry binaries exist, and the engine and
router versions installed where the job runs accept its flags; submits nothing."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from srt_cli.environment import Edge
from srt_cli.errors import SlurmError
from srt_cli.inputs import Source, read_sources
from srt_cli.options import file_option, set_options
from srt_cli.runner import for_each_source

if TYPE_CHECKING:
    from srt_cli.planning import PlannedJob
    from srt_cli.probing import Probe, Runtime, SrunProbe
    from srt_cli.session import Session

EPILOG = """\b
Examples:
  srtctl preflight -f recipe.yaml
  srtctl preflight -f overrides.yaml:override_tp8
  SRTSLURM_CONFIG=cluster-b/srtslurm.yaml srtctl preflight -f recipes/
  srtctl preflight -f recipe.yaml --no-probe   # no srun step, no version probe
"""


@click.command("preflight", epilog=EPILOG)
@file_option()
@set_options
@click.option(
    "--no-probe",
    is_flag=True,
    help="Do not probe the installed engine/router versions (no srun step); check the flags "
    "against the versions validate resolves.",
)
@click.pass_obj
def command(
    edge: Edge,
    *,
    files: tuple[str, ...],
    sets: tuple[str, ...],
    unsets: tuple[str, ...],
    no_probe: bool,
) -> None:
    """Check, for every job, that model.path is a folder (or an hf:<repo> the hub resolves, when
    it can be reached: HF_ENDPOINT, HF_TOKEN), that container images
    are registry references or existing files (container runtime pyxis) and that telemetry
    binaries are on PATH (container runtime none). Then probe the engine, frontend and router
    packages installed where the job runs (its runtime interpreter, in its image on pyxis: one
    short srun step per runtime when srun is on PATH, else this machine), say each version and
    the flag catalog it is checked against, and check the flags with them. Exit 4 if anything
    is missing or a flag is refused.
    """
    from srt_cli.preflight import check_job, check_versions, preflight_path
    from srt_cli.probing import run_probe
    from srt_cli.session import open_session

    session = open_session(edge, output=None, sets=sets, unsets=unsets)
    sources = read_sources(files, sys.stdin)
    search_path = preflight_path(edge, session.python)
    probes: dict[tuple[Runtime, tuple[str, ...], SrunProbe | None], Probe] = {}

    def probe_in(srun: SrunProbe | None) -> Callable[[Runtime, list[str]], Probe]:
        def probe(runtime: Runtime, wanted: list[str]) -> Probe:
            key = (runtime, tuple(wanted), srun)
            if key not in probes:
                probes[key] = run_probe(runtime, wanted, srun=srun, environ=edge.environ)
            return probes[key]

        return probe

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
            versions, flags = check_versions(
                planned,
                session.effective,
                python=session.python,
                probe=None if no_probe else probe_in(_srun_probe(edge, session, planned)),
            )
            findings += flags
            fatal = any(f.fatal for f in findings)
            click.echo(f"{'✗' if fatal else '✓'} {planned.job.label}: {planned.job.name}")
            for finding in findings:
                note = (
                    ""
                    if finding.fatal
                    else finding.note or " (not critical; the job runs without it)"
                )
                click.echo(f"  {planned.job.label}: {finding.field}: {finding.message}{note}")
            for line in versions:
                click.echo(f"  {planned.job.label}: versions: {line}")
            failed += fatal
        if failed:
            raise SlurmError(f"{source.label}: preflight failed for {failed} job(s)")

    for_each_source(sources, step)


def _srun_probe(edge: Edge, session: Session, planned: PlannedJob) -> SrunProbe | None:
    """The probe runs as an srun step in the job's partition and account when srun is on PATH
    and the cluster is not a local one; else here."""
    from srt_cli.probing import SrunProbe

    if session.effective.launcher == "local":
        return None
    srun = shutil.which("srun", path=edge.environ.get("PATH", os.defpath))
    if srun is None:
        return None
    request = planned.request
    return SrunProbe(srun=srun, partition=request.partition, account=request.account)
