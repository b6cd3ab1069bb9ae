"""A stand-in for Nsight Systems' ``nsys`` (``python -m srt_runtime.standin.nsys``): in a
stand-in job the profiler is replaced along with the GPU engine it would profile, so a profiling
recipe runs end to end here with its wrapper, its session control and its report wait intact.

It takes the command lines srt plans for the real ``nsys`` and does what they ask of the process
tree, without measuring anything:

- ``profile [options] -o OUT program...``: runs the program; when it ends, or on SIGTERM/SIGINT
  (forwarded to the program, then waited for), writes the report ``OUT.nsys-rep``.
- ``launch --session-new=NAME [options] program...``: runs the program under session NAME; if it
  ends while the session captures, the capture ends with it (the report is written).
- ``start --session=NAME [options] -o OUT``: starts the capture of that session.
- ``stop --session=NAME``: writes that session's report and returns.

Reports are small JSON documents (``"stand_in": true``, the options, the program, start and end
times). Writing a report takes ``$SRT_STANDIN_NSYS_REPORT_DELAY`` seconds (default 0), so a test
can show that srt waits for it, and what happens when the wait is too short. Sessions live in
``$SRT_STANDIN_NSYS_STATE`` (default ``$TMPDIR/srt-standin-nsys``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

__all__ = ["main"]

_VALUED = {"-t", "-c", "-p", "-o", "-s", "--capture-range-end", "--delay", "--duration"}
_VALUED |= {"--force-overwrite", "--kill", "--wait", "--trace", "--output"}


def _split(args: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """Options (``--k=v``, ``--k v``, ``-k v``) up to the program; the program's argv."""
    options: dict[str, str] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith("-"):
            break
        if "=" in arg:
            key, _, value = arg.partition("=")
            options[key] = value
        elif arg in _VALUED and i + 1 < len(args):
            options[arg] = args[i + 1]
            i += 1
        else:
            options[arg] = "true"
        i += 1
    return options, list(args[i:])


def _state(session: str) -> Path:
    root = os.environ.get("SRT_STANDIN_NSYS_STATE") or str(
        Path(tempfile.gettempdir()) / "srt-standin-nsys"
    )
    path = Path(root) / session
    path.mkdir(parents=True, exist_ok=True)
    return path


def _write_report(output: str, record: dict[str, object]) -> Path:
    delay = float(os.environ.get("SRT_STANDIN_NSYS_REPORT_DELAY") or 0)
    if delay > 0:
        time.sleep(delay)
    path = Path(output if output.endswith(".nsys-rep") else f"{output}.nsys-rep")
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"stand_in": True, **record, "written_at": time.time()}
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(record, indent=2) + "\n")
    tmp.replace(path)
    print(f"stand-in nsys: report {path}", file=sys.stderr, flush=True)
    return path


def _run(program: list[str]) -> tuple[int, float]:
    """Run ``program``, forwarding SIGTERM/SIGINT; its exit code and start time."""
    if not program:
        print("stand-in nsys: no program to run", file=sys.stderr)
        return 2, time.time()
    started = time.time()
    child = subprocess.Popen(program)

    def forward(signum: int, _frame: FrameType | None) -> None:
        if child.poll() is None:
            child.send_signal(signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    return child.wait(), started


def _profile(args: Sequence[str]) -> int:
    options, program = _split(args)
    output = options.get("-o") or options.get("--output") or "report1"
    code, started = _run(program)
    _write_report(
        output,
        {
            "command": "profile",
            "options": options,
            "program": program,
            "started_at": started,
            # what the real nsys would load its libraries from (profiling.nsys_library_paths)
            "ld_library_path": os.environ.get("LD_LIBRARY_PATH", ""),
        },
    )
    return code


def _launch(args: Sequence[str]) -> int:
    options, program = _split(args)
    session = options.get("--session-new")
    if not session:
        print("stand-in nsys: launch needs --session-new=NAME", file=sys.stderr)
        return 2
    state = _state(session)
    for stale in ("start.json", "stopped"):  # a session name is reused by the next job
        (state / stale).unlink(missing_ok=True)
    (state / "launch.json").write_text(json.dumps({"options": options, "program": program}))
    code, _ = _run(program)
    if (state / "start.json").exists() and not (state / "stopped").exists():
        # the program ended while its session was capturing: the capture ends with it
        _stop([f"--session={session}"])
    return code


def _start(args: Sequence[str]) -> int:
    options, _ = _split(args)
    session = options.get("--session")
    output = options.get("-o") or options.get("--output")
    if not session or not output:
        print("stand-in nsys: start needs --session=NAME and -o OUT", file=sys.stderr)
        return 2
    record = {"options": options, "output": output, "started_at": time.time()}
    (_state(session) / "start.json").write_text(json.dumps(record))
    print(f"stand-in nsys: session {session} capturing", file=sys.stderr, flush=True)
    return 0


def _stop(args: Sequence[str]) -> int:
    options, _ = _split(args)
    session = options.get("--session")
    if not session:
        print("stand-in nsys: stop needs --session=NAME", file=sys.stderr)
        return 2
    state = _state(session)
    try:
        start = json.loads((state / "start.json").read_text())
    except FileNotFoundError:
        print(f"stand-in nsys: session {session} was not started", file=sys.stderr)
        return 1
    launch = json.loads((state / "launch.json").read_text())
    _write_report(
        start["output"],
        {
            "command": "launch/start/stop",
            "session": session,
            "options": {**launch["options"], **start["options"]},
            "program": launch["program"],
            "started_at": start["started_at"],
        },
    )
    (state / "stopped").touch()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print("usage: python -m srt_runtime.standin.nsys profile|launch|start|stop ...")
        return 2
    command, rest = args[0], args[1:]
    match command:
        case "profile":
            return _profile(rest)
        case "launch":
            return _launch(rest)
        case "start":
            return _start(rest)
        case "stop":
            return _stop(rest)
    print(f"stand-in nsys: unknown command {command!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
