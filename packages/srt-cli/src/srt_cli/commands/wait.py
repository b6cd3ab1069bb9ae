"""``srtctl wait JOB...``: block until each job ends; the exit code says how they ended."""

from __future__ import annotations

import json

import click

from srt_cli.environment import Edge
from srt_cli.options import json_option, output_option

EPILOG = """\b
Examples:
  srtctl wait 4242
  srtctl wait local-20261129T153251Z -o outputs --timeout 3600
  srtctl wait 4242 4243 --json | jq -r 'select(.outcome != "completed") | .job_id'

\b
Exit codes (several jobs: the largest):
  0  every job completed with a valid result (or, with no benchmark planned, completed)
  10 invalid: completed, but the rollup has an invalid verdict (or no rollup)
  11 cancelled (srtctl cancel, scancel, Ctrl-C)
  12 failed (a process failed, the job's time limit, a supervisor that died)
  13 timed out: --timeout passed before the job ended
  14 unknown job: no job folder and Slurm does not know it
"""


@click.command("wait", epilog=EPILOG)
@click.argument("jobs", nargs=-1, required=True)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=None,
    metavar="SECONDS",
    help="Stop waiting after this many seconds (jobs still running: exit 13). Default: no limit.",
)
@click.option(
    "--interval",
    type=click.FloatRange(min=0.1),
    default=2.0,
    show_default=True,
    metavar="SECONDS",
    help="Seconds between looks at the job folders (and squeue).",
)
@output_option
@json_option(
    'One JSON line per job as it ends: {"job_id", "outcome", "exit", "job_exit_code", '
    '"detail", "job_dir", "cause", "fix"}.'
)
@click.pass_obj
def command(
    edge: Edge,
    *,
    jobs: tuple[str, ...],
    timeout: float | None,
    interval: float,
    output: str | None,
    as_json: bool,
) -> None:
    """Wait until every JOB (Slurm job ids, or local-<timestamp>) has ended.

    Prints one line per job as it ends: completed, invalid, cancelled, failed, timed_out or
    unknown, and for a failed job the cause the failure catalog names. An empty queue never
    counts as success: a job is completed only when its runtime wrote a final `completed`
    status and, when it ran a benchmark, a valid benchmark-rollup.json.
    """
    from pathlib import Path

    from srt_cli.jobs import job_base, parse_job_id
    from srt_cli.waiting import Outcome, exit_code_for, observe, wait_for_jobs

    ids = list(dict.fromkeys(parse_job_id(j).job_id for j in jobs))  # usage errors first
    base = job_base(edge, output)

    def report(outcome: Outcome) -> None:
        cause = _cause(Path(outcome.job_dir)) if outcome.kind == "failed" else None
        if as_json:
            doc = outcome.to_json()
            if cause is not None:
                doc.update(cause)
            click.echo(json.dumps(doc))
            return
        click.echo(outcome.line())
        if cause is not None:
            click.echo(f"  cause: {cause['cause']}")
            if cause["fix"]:
                click.echo(f"  fix:   {cause['fix']}")

    outcomes = wait_for_jobs(
        ids,
        lambda job_id: observe(job_id, base, edge.environ),
        timeout=timeout,
        interval=interval,
        report=report,
    )
    code = exit_code_for(outcomes)
    if code:
        raise click.exceptions.Exit(code)


def _cause(job_dir: object) -> dict[str, str] | None:
    """The failure catalog's cause and fix of a failed job (None: it wrote no diagnosis)."""
    from pathlib import Path

    from srt_cli.jobs import read_cause

    assert isinstance(job_dir, Path)
    found = read_cause(job_dir)
    if found is None:
        return None
    return {"cause": str(found["cause"]), "fix": str(found["fix"])}
