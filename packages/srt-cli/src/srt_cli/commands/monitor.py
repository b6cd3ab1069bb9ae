"""``srtctl monitor``: a live table of the user's jobs (squeue --me plus local job folders)."""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from srt_cli.environment import Edge
from srt_cli.options import json_option, output_option

EPILOG = """\b
Examples:
  srtctl monitor                      # refresh every 5 s until Ctrl-C
  srtctl monitor --once --all -o /shared/outputs
  srtctl monitor --once --json | jq -r 'select(.ended | not) | .job_id'
"""


@click.command("monitor", epilog=EPILOG)
@output_option
@click.option("--once", is_flag=True, help="Print one table (or one JSON line per job) and exit.")
@click.option(
    "-i",
    "--interval",
    default=5.0,
    show_default=True,
    type=click.FloatRange(min=0.1),
    metavar="SECONDS",
    help="Seconds between refreshes.",
)
@click.option(
    "-a", "--all", "show_all", is_flag=True, help="Also show jobs that have ended (every folder)."
)
@json_option("One JSON line per job (the `srtctl status --json` object) per refresh.")
@click.pass_obj
def command(
    edge: Edge,
    *,
    output: str | None,
    once: bool,
    interval: float,
    show_all: bool,
    as_json: bool,
) -> None:
    """Show the user's jobs: Slurm jobs from `squeue --me` and the local runs under the output
    base, with Slurm state, stage, workers ready, benchmark phase and last update.

    Refreshes every --interval seconds until Ctrl-C; --once prints once. Jobs that have ended
    are shown with --all.
    """
    from srt_cli.jobs import job_base

    base = job_base(edge, output)
    try:
        while True:
            summaries, notes = collect(edge, base, show_all=show_all)
            if as_json:
                for summary in summaries:
                    click.echo(json.dumps(summary))
                for note in notes:
                    click.echo(f"note: {note}", err=True)
            else:
                if not once:
                    click.clear()
                every = None if once else interval
                click.echo(render_screen(summaries, notes, base, _now(), every))
            if once:
                return
            time.sleep(interval)
    except KeyboardInterrupt:
        return


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def collect(edge: Edge, base: Path, *, show_all: bool) -> tuple[list[dict[str, Any]], list[str]]:
    """One summary per job: squeue --me rows first, then local (or, with --all, every) folder;
    and notes (no squeue, unreadable job folders)."""
    from srt_cli.errors import CliError
    from srt_cli.jobs import JobRef, SlurmLookup, build_summary, find_job_folders, query_mine

    mine = query_mine(edge.environ)
    notes = [mine.note] if mine.note else []
    summaries = []
    listed: set[str] = set()

    def add(ref: JobRef, folder: Path, slurm: SlurmLookup | None, *, ended_too: bool) -> None:
        try:
            summary = build_summary(ref, folder, slurm)
        except CliError as exc:
            notes.append(exc.format_message())
            return
        if ended_too or not summary["ended"]:
            summaries.append(summary)

    for row in mine.rows:
        if row.base_id in listed:  # a further component of a heterogeneous job
            continue
        listed.add(row.base_id)
        ref = JobRef(job_id=row.base_id, kind="slurm")
        add(ref, base / row.base_id, SlurmLookup(rows=(row,)), ended_too=True)
    gone = "not in squeue --me" if mine.note is None else mine.note
    for folder in find_job_folders(base):
        local = folder.name.startswith("local-")
        if folder.name in listed or (not local and not show_all):
            continue
        ref = JobRef(job_id=folder.name, kind="local" if local else "slurm")
        slurm = None if local else SlurmLookup(rows=(), note=gone)
        add(ref, folder, slurm, ended_too=show_all)
    return summaries, notes


def _workers(summary: Mapping[str, Any]) -> str:
    workers = summary["workers"]
    return "-" if workers is None else f"{workers['ready']}/{workers['total']}"


def _stage(summary: Mapping[str, Any]) -> str:
    if summary["stage"] is None:
        return "-"
    if summary["ended"]:
        return f"{summary['status']} (exit {summary['exit_code']})"
    if summary["supervisor"] == []:
        return f"{summary['stage']} (no supervisor here)"
    return str(summary["stage"])


def build_rows(summaries: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    rows = []
    for s in summaries:
        slurm = s["slurm"]
        where = slurm["state"] if slurm is not None else ("local" if s["kind"] == "local" else "-")
        rows.append(
            [
                s["job_id"],
                s["job_name"] or (slurm["name"] if slurm is not None else "-"),
                where,
                _stage(s),
                _workers(s),
                s["benchmark"],
                s["updated_at"] or "-",
            ]
        )
    return rows


def render_screen(
    summaries: Sequence[Mapping[str, Any]],
    notes: Sequence[str],
    base: Path,
    now: str,
    interval: float | None,
) -> str:
    """One refresh of the monitor (pure)."""
    from srt_cli.tables import render_table

    every = f", every {interval:g} s (Ctrl-C quits)" if interval is not None else ""
    lines = [f"srtctl monitor: {now}{every}; output base {base}"]
    if summaries:
        header = ("job", "name", "slurm", "stage", "workers", "benchmark", "updated")
        lines.append(render_table(header, build_rows(summaries)))
    else:
        lines.append("  no jobs")
    lines.extend(f"  note: {note}" for note in notes)
    return "\n".join(lines)
