"""``srtctl report SWEEP_DIR``: the sweep report page (srt_telemetry.sweep_report)."""

from __future__ import annotations

from pathlib import Path

import click

from srt_cli.environment import Edge

EPILOG = """\b
Examples:
  srtctl report outputs/sweeps/qwen-sweep-20261202T101500Z
  srtctl report outputs                      # every job folder in outputs/
  srtctl report outputs/sweeps/qwen-sweep-20261202T101500Z --out /tmp/sweep.html

\b
The last job of a sweep writes the same page itself when all the sweep's jobs
share one output folder (docs/compare.md#sweep-report). Exit codes: 0 written,
2 SWEEP_DIR is not a sweep folder or a folder of job folders, 4 cannot write.
"""


@click.command("report", epilog=EPILOG)
@click.argument("sweep_dir", metavar="SWEEP_DIR")
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    help="Where to write the page (default SWEEP_DIR/sweep-report.html).",
)
@click.pass_obj
def command(edge: Edge, *, sweep_dir: str, out: str | None) -> None:
    """Write one self-contained HTML page for a sweep: the Pareto frontier across all points
    and runs (output tok/s per GPU against tok/s per user), throughput-latency curves per
    configuration, the validity table, and a link to each run's dashboard.

    SWEEP_DIR is <output>/sweeps/<name> (srtctl apply writes its sweep.json), or any folder
    whose sub-folders are job folders (then each job is its own configuration).
    """
    from srt_cli.errors import CliUsageError, SlurmError
    from srt_telemetry.errors import DashboardError
    from srt_telemetry.sweep_report import write_sweep_report

    folder = Path(edge.cwd) / sweep_dir
    target = Path(edge.cwd) / out if out is not None else None
    try:
        written = write_sweep_report(folder, target)
    except DashboardError as exc:
        raise CliUsageError(str(exc)) from exc
    except OSError as exc:
        raise SlurmError(
            f"cannot write the report for {folder} ({exc.strerror}: {exc.filename}); "
            "pass --out with a writable path"
        ) from exc
    click.echo(f"sweep report: {written}")
