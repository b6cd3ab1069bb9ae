"""``srtctl cancel JOB``: ``scancel`` a Slurm job; SIGTERM the supervisor of a local run.

A local run's supervisor is ``python -m srt_runtime run --job-dir <output>/<job_id> ...`` on this
machine. It is found by that command line in ``/proc`` (or taken from a ``pid`` recorded in
``status.json``, checked against the same command line), so nothing that is not the job's own
supervisor is ever signalled. On SIGTERM the supervisor stops every process of the job in tiers
and writes the final status.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

import click

from srt_cli.environment import Edge
from srt_cli.options import json_option, output_option

EPILOG = """\b
Examples:
  srtctl cancel 4242
  srtctl cancel local-20261129T153251Z
  srtctl cancel 4242 --json
"""


@click.command("cancel", epilog=EPILOG)
@click.argument("job")
@output_option
@json_option('One JSON object: {"job_id", "kind", "cancelled", "how", "message"}.')
@click.pass_obj
def command(edge: Edge, *, job: str, output: str | None, as_json: bool) -> None:
    """Cancel job JOB: `scancel JOB` for a Slurm job; for a local run (local-<timestamp>),
    SIGTERM to its supervisor process on this machine, which then cleans up.

    Exit 4 when scancel fails (its message is shown verbatim) or no supervisor of the local job
    runs here. A local job that has already ended is reported, not an error.
    """
    from srt_cli.jobs import parse_job_id

    ref = parse_job_id(job)
    if ref.kind == "slurm":
        record = _cancel_slurm(edge, ref.job_id)
    else:
        from srt_cli.jobs import job_base

        record = _cancel_local(job_base(edge, output) / ref.job_id, ref.job_id)
    if as_json:
        click.echo(json.dumps(record))
    else:
        click.echo(record["message"])


def _cancel_slurm(edge: Edge, job_id: str) -> dict[str, Any]:
    from srt_cli.errors import SlurmError

    exe = shutil.which("scancel", path=edge.environ.get("PATH"))
    if exe is None:
        raise SlurmError("scancel is not on PATH; run srtctl cancel on a Slurm login node")
    # Slurm 22.05's scancel exits 0 for an unknown or finished job and says why only with
    # --verbose (`scancel: error: Kill job error on job id 4242: Invalid job id specified`).
    command = [exe, "--verbose", job_id]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, env=edge.environ, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SlurmError(f"`{shlex.join(command)}` failed: {exc}") from exc
    said = (done.stderr + done.stdout).rstrip("\n")
    if done.returncode != 0 or "error:" in said:
        raise SlurmError(f"`{shlex.join(command)}` failed (exit {done.returncode}):\n{said}")
    return {
        "job_id": job_id,
        "kind": "slurm",
        "cancelled": True,
        "how": shlex.join(command),
        "message": f"cancelled Slurm job {job_id} (scancel)",
    }


def _cancel_local(job_dir: Path, job_id: str) -> dict[str, Any]:
    from srt_cli.errors import CliUsageError, SlurmError
    from srt_cli.jobs import (
        describe_process,
        find_supervisors,
        is_final,
        is_supervisor_of,
        read_recorded_pid,
        read_status,
    )

    if not job_dir.is_dir():
        raise CliUsageError(
            f"job {job_id}: no job folder {job_dir}; pass -o <output base> if the job was "
            "written elsewhere"
        )
    status = read_status(job_dir)
    if is_final(status):
        assert status is not None
        return {
            "job_id": job_id,
            "kind": "local",
            "cancelled": False,
            "how": None,
            "message": f"job {job_id} has already ended ({status.status}, exit code "
            f"{status.exit_code}); nothing to cancel",
        }
    pid = read_recorded_pid(job_dir)
    if pid is not None:
        if not is_supervisor_of(pid, job_dir):
            raise SlurmError(
                f"{job_dir / 'status.json'} records supervisor pid {pid}, but pid {pid} is not "
                f"`srt_runtime run --job-dir {job_dir}` of this user "
                f"({describe_process(pid)}); not signalling it"
            )
        found = [pid]
    else:
        found = find_supervisors(job_dir)
    if not found:
        raise SlurmError(
            f"no supervisor of local job {job_id} runs on this machine (looked for "
            f"`python -m srt_runtime run --job-dir {job_dir}` in /proc); if it runs on another "
            "machine, cancel it there"
        )
    for target in found:
        os.kill(target, signal.SIGTERM)
    pids = ", ".join(str(p) for p in found)
    return {
        "job_id": job_id,
        "kind": "local",
        "cancelled": True,
        "how": f"SIGTERM to pid {pids}",
        "message": f"sent SIGTERM to the supervisor of {job_id} (pid {pids}); it stops every "
        "process of the job and writes the final status",
    }
