"""``srtctl list`` (alias ``get``): the jobs of the output base, one line each."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import click

from srt_cli.environment import Edge
from srt_cli.options import json_option, output_option

EPILOG = """\b
Examples:
  srtctl list
  srtctl get -o /shared/outputs
  srtctl list --json | jq -r '.jobs[] | select(.status == "running") | .job_id'
"""

HEADER = ("JOB ID", "NAME", "STATUS", "STAGE", "STARTED", "EXIT")


@click.command("list", epilog=EPILOG)
@output_option
@json_option(
    'One JSON object: {"output", "jobs": [{"job_id", "kind", "job_name", "status", "stage", '
    '"started_at", "updated_at", "exit_code", "job_dir"}]}.'
)
@click.pass_obj
def command(edge: Edge, *, output: str | None, as_json: bool) -> None:
    """List the jobs of the output base (every <output>/<job_id>/ folder): id, name, status,
    stage, start time and exit code, from each folder's status events.

    Nothing is asked of Slurm (see `srtctl monitor` for the queue). A folder that cannot be read
    is reported on stderr and the others are still listed.
    """
    from srt_cli.errors import CliError
    from srt_cli.jobs import build_listing, find_job_folders, job_base

    base = job_base(edge, output)
    rows = []
    for folder in find_job_folders(base):
        try:
            rows.append(build_listing(folder))
        except CliError as exc:
            click.echo(f"note: {exc.format_message()}", err=True)
    rows.sort(key=lambda r: (r["started_at"] or "", r["job_id"]))
    if as_json:
        click.echo(json.dumps({"output": str(base), "jobs": rows}))
        return
    click.echo(render_listing(rows, str(base)))


def _cell(value: Any) -> str:
    return "-" if value is None else str(value)


def build_cells(rows: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    return [
        [
            _cell(r["job_id"]),
            _cell(r["job_name"]),
            _cell(r["status"]),
            _cell(r["stage"]),
            _cell(r["started_at"]),
            _cell(r["exit_code"]),
        ]
        for r in rows
    ]


def render_listing(rows: Sequence[Mapping[str, Any]], base: str) -> str:
    from srt_cli.tables import render_table

    if not rows:
        return f"no jobs under {base}"
    return render_table(HEADER, build_cells(rows), indent="")
