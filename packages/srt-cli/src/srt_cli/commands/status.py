"""``srtctl status JOB``: stage, workers ready, benchmark phase, results and the Slurm state."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import click

from srt_cli.environment import Edge
from srt_cli.options import json_option, output_option

EPILOG = """\b
Examples:
  srtctl status 4242
  srtctl status local-20261129T153251Z -o outputs
  srtctl status 4242 --json | jq .results
"""


@click.command("status", epilog=EPILOG)
@click.argument("job")
@output_option
@json_option(
    'One JSON object: {"job_id", "kind", "job_dir", "stage", "status", "ended", "workers", '
    '"benchmark", "results", "validity", "slurm", "supervisor", "errors", "cause", ...}.'
)
@click.pass_obj
def command(edge: Edge, *, job: str, output: str | None, as_json: bool) -> None:
    """Show what job JOB (a Slurm job id, or local-<timestamp> for a local run) is doing.

    Reads <output>/JOB/ (status.json, plan.json, the sweep log, logs/benchmark-rollup.json) and,
    for a Slurm job, asks `squeue`. A job Slurm no longer knows, or no squeue, is reported, not an
    error. Exit 2 when the job has no folder and Slurm does not know it either.
    """
    from srt_cli.errors import CliUsageError
    from srt_cli.jobs import build_summary, job_base, parse_job_id, query_job

    ref = parse_job_id(job)
    job_dir = job_base(edge, output) / ref.job_id
    slurm = query_job(edge.environ, ref.job_id) if ref.kind == "slurm" else None
    if not job_dir.is_dir() and (slurm is None or not slurm.rows):
        raise CliUsageError(
            f"job {ref.job_id}: no job folder {job_dir}"
            + (f" and Slurm says: {slurm.note}" if slurm is not None else "")
            + "; pass -o <output base> if the job was written elsewhere"
        )
    summary = build_summary(ref, job_dir, slurm)
    if as_json:
        click.echo(json.dumps(summary))
        return
    click.echo(render_summary(summary))


def _number(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _slurm_line(summary: Mapping[str, Any]) -> str | None:
    row = summary["slurm"]
    if row is not None:
        reason = row["reason"].strip("()")  # squeue's %R puts a pending reason in parentheses
        where = f"{row['nodes']} node(s), {reason}" if reason else f"{row['nodes']} node(s)"
        text = f"{row['state']} {row['elapsed']} of {row['time_limit']} ({where})"
        return text if row["source"] == "squeue" else f"{text}, from sacct"
    note = summary["slurm_note"]
    return str(note) if note is not None else None


def _stage_line(summary: Mapping[str, Any]) -> str:
    if summary["stage"] is None:
        return "not started (no status.json yet)"
    text = f"{summary['stage']} ({summary['status']}) at {summary['updated_at']}"
    if summary["exit_code"] is not None:
        text += f", exit code {summary['exit_code']}"
    if summary["message"]:
        text += f": {summary['message']}"
    return text


def _verdict(verdict: str | None, codes: Sequence[str]) -> str:
    if verdict is None:
        return "-"
    return f"{verdict}: {', '.join(codes)}" if codes else verdict


def render_results(results: Sequence[Mapping[str, Any]]) -> str:
    from srt_cli.tables import render_table

    header = ("concurrency", "req/s", "output tok/s", "TTFT p50 ms", "ITL p50 ms", "verdict")
    rows = [
        [
            _number(r["concurrency"]),
            _number(r["request_throughput"]),
            _number(r["output_tok_s"]),
            _number(r["ttft_p50_ms"]),
            _number(r["itl_p50_ms"]),
            _verdict(r.get("verdict"), r.get("reasons") or []),
        ]
        for r in results
    ]
    return render_table(header, rows, indent="    ")


def render_summary(summary: Mapping[str, Any]) -> str:
    """The text form of ``srtctl status`` (pure)."""
    name = f" ({summary['job_name']})" if summary["job_name"] else ""
    lines = [f"job {summary['job_id']}{name}: {summary['job_dir']}"]
    if not summary["exists"]:
        lines.append("  folder:     missing (the job has not started writing it, or use -o)")
    slurm = _slurm_line(summary)
    if slurm is not None:
        lines.append(f"  slurm:      {slurm}")
    lines.append(f"  stage:      {_stage_line(summary)}")
    if summary["supervisor"] == []:
        lines.append(
            "  note:       no supervisor of this job runs on this machine: it was stopped "
            "without a final status (or runs on another machine)"
        )
    workers = summary["workers"]
    if workers is not None and workers["total"]:
        lines.append(f"  workers:    {workers['ready']}/{workers['total']} ready")
    progress = summary["benchmark_progress"]
    running = summary["benchmark"] in ("running", "post-eval")
    detail = f" (last: {progress})" if progress and running else ""
    lines.append(f"  benchmark:  {summary['benchmark']}{detail}")
    if summary["results"]:
        lines.append("  results:")
        lines.append(render_results(summary["results"]))
    validity = summary.get("validity")
    if validity is not None:
        lines.append(f"  validity:   run {validity['verdict']}")
        lines.extend(f"    {r['code']}: {r['detail']}" for r in validity["reasons"])
    for key in ("rollup", "dashboard"):
        if summary[key] is not None:
            lines.append(f"  {key + ':':<11} {summary[key]}")
    cause = summary.get("cause")
    if cause is not None:
        if cause["cause"] == "unknown cause":
            lines.append(f"  cause:      unknown cause ({cause['what']}: {cause['reason']})")
        else:
            lines.append(f"  cause:      {cause['cause']}: {cause['title']}")
            lines.append(f"  fix:        {cause['fix']}")
            lines.append(f"  evidence:   {cause['evidence']}")
    if summary["errors"]:
        lines.append("  errors (last lines of the sweep log):")
        lines.extend(f"    {line}" for e in summary["errors"] for line in e.splitlines())
    return "\n".join(lines)
