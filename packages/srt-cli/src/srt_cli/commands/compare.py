"""``srtctl compare RUN_OR_SWEEP...``: KPI deltas with 95% CIs, what differed (docs/compare.md)."""

from __future__ import annotations

from pathlib import Path

import click

from srt_cli.environment import Edge
from srt_cli.options import json_option

EPILOG = """\b
Examples:
  srtctl compare outputs/local-20261202T101500Z outputs/local-20261202T103000Z
  srtctl compare outputs/4242 outputs/4243 --json | jq '.windows[0].kpis'
  srtctl compare outputs/sweeps/qwen-sweep-20261202T101500Z --html compare.html
  srtctl compare a/logs/benchmark-rollup.json b/logs/benchmark-rollup.json --resamples 0

\b
The first run is the baseline; every other run is compared with it, per
concurrency. Invalid windows (benchmark-rollup.json `validity`) are excluded and
named. Exit codes: 0 compared, 2 a path is not a run or fewer than two runs have
results.
"""


@click.command("compare", epilog=EPILOG)
@click.argument("paths", nargs=-1, required=True, metavar="RUN_OR_SWEEP...")
@json_option(
    'One JSON object: {"baseline", "runs" (verdict, settings, version_drift), "windows" (per '
    "concurrency and run: kpis with delta, delta_pct, ci_low, ci_high, significant), "
    '"excluded", "missing", "points", "resamples", "seed"}.'
)
@click.option(
    "--html",
    "html_file",
    type=click.Path(dir_okay=False, writable=True),
    help="Also write one self-contained page: every run on one Pareto chart, the deltas.",
)
@click.option(
    "--resamples",
    type=click.IntRange(min=0),
    default=1000,
    show_default=True,
    help="Bootstrap resamples per window and KPI (0: no confidence intervals).",
)
@click.option("--seed", type=int, default=19, show_default=True, help="Bootstrap seed.")
@click.option(
    "--no-records",
    is_flag=True,
    help="Use the rollups' numbers only (no per-request records, no CIs; fast).",
)
@click.pass_obj
def command(
    edge: Edge,
    *,
    paths: tuple[str, ...],
    as_json: bool,
    html_file: str | None,
    resamples: int,
    seed: int,
    no_records: bool,
) -> None:
    """Compare benchmark runs: job folders (<output>/<job_id>), sweep folders
    (<output>/sweeps/<name>, every point) or benchmark-rollup.json files.

    Per concurrency: output tok/s, tok/s per GPU, TTFT/ITL/TPOT/E2EL p50 and p99 and J per
    output token (when measured), each with the delta from the baseline and its 95% confidence
    interval, bootstrapped from the per-request records of the sa-bench result files. Per run:
    the settings that differed in the resolved recipes (config.yaml) and the versions that
    differed in the worker fingerprints.
    """
    from srt_cli.compare.inputs import read_inputs
    from srt_cli.compare.model import Options, build_comparison
    from srt_cli.errors import CliUsageError, SlurmError

    resolved = [Path(edge.cwd) / p for p in paths]
    runs, missing = read_inputs(resolved, records=not no_records)
    if len(runs) < 2:
        named = "; ".join(f"{m.label}: {m.why}" for m in missing)
        raise CliUsageError(
            f"compare needs at least two runs with results, found {len(runs)}"
            + (f" ({named})" if named else "")
            + "; pass two job folders, or a sweep folder with two finished points"
        )
    comparison = build_comparison(
        runs, missing, Options(resamples=0 if no_records else resamples, seed=seed)
    )
    if html_file is not None:
        from srt_cli.compare.overlays import build_distributions
        from srt_cli.compare.render_html import render_html

        target = Path(edge.cwd) / html_file
        try:
            target.write_text(render_html(comparison, build_distributions(runs)))
        except OSError as exc:
            raise SlurmError(
                f"cannot write {target} ({exc.strerror}); choose a writable --html path"
            ) from exc
    if as_json:
        import msgspec

        click.echo(msgspec.json.encode(comparison).decode())
        return
    from srt_cli.compare.render_text import render_text

    click.echo(render_text(comparison), nl=False)
    if html_file is not None:
        click.echo(f"html: {Path(edge.cwd) / html_file}")
