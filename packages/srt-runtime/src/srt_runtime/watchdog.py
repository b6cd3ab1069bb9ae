"""The local launcher's watchdog: nothing of a local job outlives its supervisor.

Every process the :class:`~srt_runtime.launch.LocalLauncher` starts leads its own process group
(``start_new_session``), is recorded (name, pid = pgid, start time) in the job's process record
(``logs/local_processes.jsonl``) as soon as it exists, and carries the launcher's job marker
(``SRT_LOCAL_JOB=<token>``) in its environment, which every descendant inherits.

The supervisor starts one watchdog per job (``python -I watchdog.py --record R --token T``, this
file run by path, so it imports the standard library only) holding the read end of a pipe whose
write end only the supervisor has (non-inheritable, so no job process keeps it open). When the
supervisor exits for any reason, SIGKILL included, the pipe reaches EOF and the watchdog

1. SIGKILLs every recorded process group that still exists (a pgid whose leader pid now belongs
   to a process with a different start time was recycled after our group ended: skipped);
2. SIGKILLs every process of this user whose environment carries the job marker (descendants
   that left the group with ``setsid``, or a process started in the instant before its record
   line was written), until none is left (at most 5 s).

After a normal run there is nothing left to kill, so this costs one scan of ``/proc``. The
watchdog runs in its own session and ignores SIGINT and SIGHUP (a Ctrl-C or a closed terminal
reaches the supervisor, which stops the job itself; if the supervisor dies of it, the watchdog
still cleans up).

Why not PR_SET_PDEATHSIG: it reaches only the direct child (``bash -c ... && exec prog``), not
the programs it starts (the Dynamo frontend's workers), and it needs ``preexec_fn``, which is not
safe in the threaded supervisor.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

__all__ = [
    "MARKER_VARIABLE",
    "RECORD_NAME",
    "Watchdog",
    "kill_job_processes",
    "marked_pids",
    "read_record",
    "record_process",
    "start_time",
    "start_watchdog",
]

#: The environment variable every process of a local job carries (value: the job's token).
MARKER_VARIABLE = "SRT_LOCAL_JOB"
#: The process record, in the launcher's log directory.
RECORD_NAME = "local_processes.jsonl"
_PROC = Path("/proc")
_KILL_SECONDS = 5.0


def start_time(pid: int, proc: Path = _PROC) -> int | None:
    """The process's start time in clock ticks since boot (``/proc/<pid>/stat`` field 22)."""
    try:
        stat = (proc / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return int(fields[19])


def record_process(record: Path, name: str, pid: int) -> None:
    """Append one started process (its pid is its process group id) to the record."""
    line = {"name": name, "pid": pid, "pgid": pid, "start": start_time(pid)}
    with record.open("a") as handle:
        handle.write(json.dumps(line) + "\n")


def read_record(record: Path) -> list[dict[str, object]]:
    """The recorded processes (a torn last line, from a supervisor killed mid-write, is skipped)."""
    try:
        text = record.read_text()
    except OSError:
        return []
    entries = []
    for line in text.splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            entry = json.loads(line)
            if isinstance(entry, dict):
                entries.append(entry)
    return entries


def _state(pid: int, proc: Path) -> str | None:
    try:
        return (proc / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def marked_pids(token: str, proc: Path = _PROC, *, variable: str = MARKER_VARIABLE) -> list[int]:
    """Live (non-zombie) processes of this user whose environment has ``variable=token``
    (``SRT_LOCAL_JOB`` by default; tests mark a whole run with a variable of their own)."""
    needle = f"{variable}={token}".encode()
    own = os.getpid()
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == own:
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue  # gone, or another user's
        if needle in environ.split(b"\0") and _state(int(entry.name), proc) not in (None, "Z"):
            found.append(int(entry.name))
    return found


def _kill_groups(record: Path, proc: Path) -> None:
    for entry in read_record(record):
        pgid, started = entry.get("pgid"), entry.get("start")
        if not isinstance(pgid, int) or pgid <= 1:
            continue
        now = start_time(pgid, proc)
        # A live leader must be the recorded one; otherwise the pid was recycled after our whole
        # group ended (Linux never hands out a pid still in use as a process group id).
        if now is not None and now != started:
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)


def kill_job_processes(record: Path, token: str, proc: Path = _PROC) -> list[int]:
    """SIGKILL every recorded group and every marked process; the marked pids still alive after
    ``_KILL_SECONDS`` (normally none)."""
    _kill_groups(record, proc)
    deadline = time.monotonic() + _KILL_SECONDS
    while True:
        left = marked_pids(token, proc)
        if not left or time.monotonic() > deadline:
            return left
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


class Watchdog:
    """The supervisor's side: the running watchdog and the write end of its pipe."""

    def __init__(self, popen: subprocess.Popen[bytes], write_fd: int) -> None:
        self.popen = popen
        self._write_fd: int | None = write_fd

    @property
    def pid(self) -> int:
        return self.popen.pid

    def close(self, timeout: float = 10.0) -> None:
        """End of the run: the watchdog checks nothing is left, and exits."""
        if self._write_fd is not None:
            os.close(self._write_fd)
            self._write_fd = None
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout)


def start_watchdog(record: Path, token: str, *, python: str = sys.executable) -> Watchdog:
    """Start the job's watchdog; it acts when the returned pipe end closes (this process ends,
    or :meth:`Watchdog.close`)."""
    read_fd, write_fd = os.pipe()  # both non-inheritable: no job process holds the write end
    try:
        popen = subprocess.Popen(
            [
                python,
                "-I",
                str(Path(__file__).resolve()),
                "--record",
                str(record),
                "--token",
                token,
            ],
            stdin=read_fd,
            stdout=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        os.close(write_fd)
        raise
    finally:
        os.close(read_fd)
    return Watchdog(popen, write_fd)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="srt_runtime watchdog")
    parser.add_argument("--record", type=Path, required=True)
    parser.add_argument("--token", required=True)
    args = parser.parse_args(argv)
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    while True:
        try:
            if not os.read(0, 4096):
                break
        except InterruptedError:
            continue
        except OSError:
            break
    left = kill_job_processes(args.record, args.token)
    if left:
        print(f"srt_runtime watchdog: could not kill {left}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
