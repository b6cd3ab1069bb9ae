"""The two ways a job starts: ``sbatch --parsable`` on a Slurm login node, or the runtime in the
foreground on this machine (the local launcher). The only subprocesses srt-cli starts.
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

from srt_cli.errors import SlurmError

__all__ = ["parse_job_id", "run_local", "submit_sbatch"]


def parse_job_id(stdout: str) -> str:
    """``sbatch --parsable`` prints ``<id>`` or ``<id>;<cluster>``."""
    first = stdout.strip().splitlines()[-1] if stdout.strip() else ""
    job_id = first.split(";", 1)[0].strip()
    if not job_id.isdigit():
        raise SlurmError(f"sbatch --parsable printed {stdout.strip()!r}, not a job id")
    return job_id


def submit_sbatch(
    script: Path,
    *,
    sbatch: str,
    cwd: Path,
    environ: Mapping[str, str],
    output: str | None = None,
    timeout: float = 120.0,
) -> str:
    """Submit ``script`` (``output`` overrides the script's ``--output``); Slurm's own error text
    is shown verbatim with the command that failed."""
    command = [sbatch, "--parsable", *([f"--output={output}"] if output else []), str(script)]
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            env=dict(environ),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SlurmError(f"could not run `{shlex.join(command)}`: {exc}") from exc
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).rstrip("\n")
        raise SlurmError(f"`{shlex.join(command)}` failed (exit {done.returncode}):\n{detail}")
    return parse_job_id(done.stdout)


def run_local(
    job_dir: Path, *, python: str, environ: Mapping[str, str], show: Callable[[str], None]
) -> int:
    """Run ``python -m srt_runtime run --job-dir DIR --plan DIR/plan.json`` in the foreground.

    Its output (stdout and stderr, merged) is passed line by line to ``show`` as it comes.
    """
    command = [
        python,
        "-m",
        "srt_runtime",
        "run",
        "--job-dir",
        str(job_dir),
        "--plan",
        str(job_dir / "plan.json"),
    ]
    try:
        child = subprocess.Popen(
            command,
            cwd=job_dir,
            env=dict(environ),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
    except OSError as exc:
        raise SlurmError(f"could not run `{shlex.join(command)}`: {exc}") from exc
    assert child.stdout is not None
    with child:
        for line in child.stdout:
            show(line.rstrip("\n"))
    return child.returncode
