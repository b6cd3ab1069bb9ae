"""The two ways a job starts: ``sbatch --parsable`` on a Slurm login node, or the runtime in the
foreground on this machine (the local launcher). The only subprocesses srt-cli starts.
"""

from __future__ import annotations

import shlex
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

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
    text: str | None = None,
) -> str:
    """Submit ``script`` (``output`` overrides the script's ``--output``); Slurm's own error text
    is shown verbatim with the command that failed. With ``text``, sbatch reads the script from
    its stdin instead (the file ``script`` holds it with its secrets redacted)."""
    command = [sbatch, "--parsable", *([f"--output={output}"] if output else [])]
    if text is None:
        command.append(str(script))
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            env=dict(environ),
            input=text,
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


#: Signals that stop a local job: forwarded to the runtime, which cleans up and ends.
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextmanager
def _forward_stop_signals(
    child: subprocess.Popen[str], on_stop: Callable[[int], None] | None = None
) -> Iterator[None]:
    """While the runtime runs, SIGINT/SIGTERM/SIGHUP to srtctl go to the runtime instead of
    ending srtctl (which would leave the job running): it stops the job in tiers, writes the
    final status (``cancelled``) and exits, and srtctl returns after it."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set in the main thread
        return

    def _forward(signum: int, _frame: FrameType | None) -> None:
        if on_stop is not None:
            on_stop(signum)
        if child.poll() is None:
            child.send_signal(signum)

    previous = {sig: signal.signal(sig, _forward) for sig in _STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def run_local(
    job_dir: Path,
    *,
    python: str,
    environ: Mapping[str, str],
    show: Callable[[str], None],
    on_stop: Callable[[int], None] | None = None,
) -> int:
    """Run ``python -m srt_runtime run --job-dir DIR --plan DIR/plan.json`` in the foreground.

    Its output (stdout and stderr, merged) is passed line by line to ``show`` as it comes. A
    SIGINT/SIGTERM/SIGHUP meanwhile is forwarded to the runtime, which stops the job through its
    normal cleanup; this returns once the runtime has exited (its exit code: 1). ``on_stop``
    hears of each such signal (apply then starts no further job of a sweep).
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
    with child, _forward_stop_signals(child, on_stop):
        for line in child.stdout:
            show(line.rstrip("\n"))
        child.wait()
    return child.returncode
