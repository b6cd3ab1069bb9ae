"""``srtctl validate``: load and plan recipes; no output but errors (``--json``: line per file)."""

from __future__ import annotations

import json
import sys

import click

from srt_cli.environment import Edge
from srt_cli.errors import CliError
from srt_cli.inputs import Source, read_sources
from srt_cli.options import file_option, json_option, set_options, skip_flag_check_option
from srt_cli.runner import for_each_source

EPILOG = """\b
Examples:
  srtctl validate -f recipe.yaml
  srtctl validate -f recipes/ --json
  srtctl validate -f overrides.yaml:override_tp8 --set benchmark.isl=2048
"""


@click.command("validate", epilog=EPILOG)
@file_option()
@set_options
@click.option("--sweep", is_flag=True, help="Treat the file as a sweep even without `sweep:`.")
@skip_flag_check_option
@json_option('One line per file: {"file", "ok", "jobs", "errors": [{"file", "path", "message"}]}.')
@click.pass_obj
def command(
    edge: Edge,
    *,
    files: tuple[str, ...],
    sets: tuple[str, ...],
    unsets: tuple[str, ...],
    sweep: bool,
    as_json: bool,
    skip_flag_check: bool,
) -> None:
    """Load every recipe (all variants and sweep points) and plan it on simulated nodes.

    Prints nothing when everything is valid; exit 2 for a recipe that does not load, 3 for one
    that cannot be planned.
    """
    from srt_cli.session import open_session

    session = open_session(
        edge, output=None, sets=sets, unsets=unsets, check_flags=not skip_flag_check
    )
    sources = read_sources(files, sys.stdin)

    def step(source: Source) -> None:
        jobs = session.plan_source(source, force_sweep=sweep)
        if as_json:
            line = {"file": source.label, "ok": True, "jobs": len(jobs), "errors": []}
            click.echo(json.dumps(line))

    def report(source: Source, exc: CliError) -> None:
        if not as_json:
            exc.show()
            return
        errors = list(exc.issues) or [
            {"file": source.label, "path": "$", "message": exc.format_message()}
        ]
        line = {"file": source.label, "ok": False, "jobs": 0, "errors": errors}
        click.echo(json.dumps(line))

    for_each_source(sources, step, on_error=report)
