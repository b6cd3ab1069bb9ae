"""``srtctl render --to DIR``: sbatch_script.sh, config.yaml and plan.json for one job."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from srt_cli.environment import Edge
from srt_cli.errors import CliUsageError, SlurmError
from srt_cli.inputs import read_sources
from srt_cli.options import file_option, output_option, set_options

EPILOG = """\b
Examples:
  srtctl render -f recipe.yaml --to build/job
  srtctl render -f overrides.yaml:override_tp8 --to build/tp8 --set slurm.time_limit=02:00:00
  sbatch "$(srtctl render -f recipe.yaml --to build/job | tail -n 1)"
"""


@click.command("render", epilog=EPILOG)
@file_option(multiple=False)
@click.option(
    "--to",
    "target",
    required=True,
    type=click.Path(file_okay=False),
    help="Folder to write into (created).",
)
@set_options
@output_option
@click.option("--serve-only", is_flag=True, help="Run without the benchmark (serve until stopped).")
@click.option("--no-preflight", is_flag=True, help="Skip the model/image/binary checks.")
@click.pass_obj
def command(
    edge: Edge,
    *,
    files: str,
    target: str,
    sets: tuple[str, ...],
    unsets: tuple[str, ...],
    output: str | None,
    serve_only: bool,
    no_preflight: bool,
) -> None:
    """Write the batch script, the job's resolved config.yaml and its plan.json (planned on
    simulated nodes) into --to. Prose goes to stderr; the last stdout line is the absolute path
    of the script, so `sbatch "$(srtctl render ... | tail -n 1)"` submits it.
    """
    import msgspec

    from srt_cli.jobfiles import config_text, write_job_files
    from srt_cli.preflight import check_job, preflight_path
    from srt_cli.safepaths import writing
    from srt_cli.session import open_session

    if not target.strip():
        # an empty name would be the current folder: say so rather than write into it
        raise CliUsageError(
            f"--to {target!r}: empty folder name; name the folder to write into (--to build/job, "
            "or --to . for the current folder)"
        )
    session = open_session(edge, output=output, sets=sets, unsets=unsets)
    sources = read_sources((files,), sys.stdin)
    if len(sources) != 1:
        raise CliUsageError(f"-f {files}: render takes one file, not a directory")
    folder = Path(target) if Path(target).is_absolute() else edge.cwd / target
    planned = session.plan_source(sources[0], serve_only=serve_only, staging=str(folder))
    if len(planned) != 1:
        labels = ", ".join(p.job.label for p in planned)
        raise CliUsageError(
            f"render needs exactly one job but {sources[0].label} gives {len(planned)} "
            f"({labels}); pick one with -f FILE:SELECTOR or --set the sweep away"
        )
    job = planned[0]
    if not no_preflight and session.effective.preflight:
        search_path = preflight_path(edge, session.python)
        findings = [
            f
            for f in check_job(
                job, session.cluster.config, search_path=search_path, python=session.python
            )
            if f.fatal
        ]
        if findings:
            lines = "\n".join(f"  {job.job.label}: {f.field}: {f.message}" for f in findings)
            raise SlurmError(f"preflight failed for {job.job.label}:\n{lines}")
    script = folder / "sbatch_script.sh"
    with writing(folder, what="the render folder", fix="choose a folder you can write with --to"):
        write_job_files(
            folder,
            {
                "config.yaml": (config_text(job.job), 0o644),
                "sbatch_script.sh": (job.script, 0o755),
                "plan.json": (
                    msgspec.json.format(msgspec.json.encode(job.plan)).decode() + "\n",
                    0o644,
                ),
            },
        )
    click.echo(f"rendered {job.job.name} ({job.request.nodes} node(s)) into {folder}", err=True)
    if job.submit_script is not None:
        click.echo(
            "warning: an sbatch directive holds a credential; sbatch_script.sh has it "
            "as <redacted> (no file srt writes holds a secret): submit with `srtctl apply`, "
            "which hands sbatch the script on its stdin, or take the credential from the "
            "environment in the script",
            err=True,
        )
    click.echo(str(script))
