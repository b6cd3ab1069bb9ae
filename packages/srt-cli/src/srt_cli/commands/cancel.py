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

_PROC = Path("/proc")


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
    command = [exe, job_id]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, env=edge.environ, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SlurmError(f"`{shlex.join(command)}` failed: {exc}") from exc
    if done.returncode != 0:
        said = (done.stderr + done.stdout).rstrip("\n")
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
    from srt_cli.jobs import is_final, read_status

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
    pid = _recorded_pid(job_dir)
    if pid is not None:
        if not is_supervisor_of(pid, job_dir):
            raise SlurmError(
                f"{job_dir / 'status.json'} records supervisor pid {pid}, but pid {pid} is not "
                f"`srt_runtime run --job-dir {job_dir}` of this user ({_describe(pid)}); not "
                "signalling it"
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


def _recorded_pid(job_dir: Path) -> int | None:
    """``pid`` in status.json, if the runtime records it (StatusEvent ignores it otherwise)."""
    try:
        doc = json.loads((job_dir / "status.json").read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    pid = doc.get("pid") if isinstance(doc, dict) else None
    return pid if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 else None


def _argv(pid: int) -> list[str] | None:
    try:
        raw = (_PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return None
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def _describe(pid: int) -> str:
    argv = _argv(pid)
    return "no such process" if argv is None else f"it runs `{shlex.join(argv)}`"


def _job_dir_argument(argv: list[str]) -> str | None:
    for i, arg in enumerate(argv):
        if arg == "--job-dir" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--job-dir="):
            return arg.split("=", 1)[1]
    return None


def is_supervisor_of(pid: int, job_dir: Path) -> bool:
    """Whether ``pid`` is this user's ``... -m srt_runtime run --job-dir <job_dir>``."""
    argv = _argv(pid)
    if argv is None:
        return False
    try:
        if (_PROC / str(pid)).stat().st_uid != os.getuid():
            return False
        cwd = (_PROC / str(pid) / "cwd").readlink()
    except OSError:
        return False
    runs_module = any(
        argv[i] == "-m" and argv[i + 1] == "srt_runtime" for i in range(len(argv) - 1)
    )
    given = _job_dir_argument(argv)
    if not runs_module or "run" not in argv or given is None:
        return False
    return (cwd / given).resolve() == job_dir.resolve()


def find_supervisors(job_dir: Path) -> list[int]:
    """Every process of this user that is the supervisor of ``job_dir`` (normally one)."""
    if not _PROC.is_dir():
        return []
    own = os.getpid()
    pids = sorted(int(p.name) for p in _PROC.iterdir() if p.name.isdigit())
    return [p for p in pids if p != own and is_supervisor_of(p, job_dir)]
