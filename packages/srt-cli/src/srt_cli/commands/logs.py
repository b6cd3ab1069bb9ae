"""``srtctl logs JOB``: list a job's log files, or print (and follow) one process's log."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from srt_cli.environment import Edge
from srt_cli.options import json_option, output_option

if TYPE_CHECKING:
    from srt_cli.jobs import JobRef
    from srt_planner.plan import JobPlan

EPILOG = """\b
Examples:
  srtctl logs 4242                                  # every log file, its size and its process
  srtctl logs 4242 --process agg_0_node-01 --lines 50
  srtctl logs 4242 --process benchmark --follow     # until the job ends, or Ctrl-C
  srtctl logs local-20261129T153251Z --process supervisor
"""

#: Seconds between two looks at a followed file.
POLL_SECONDS = 0.25
#: Ask squeue whether a followed Slurm job still exists every this many polls.
_SLURM_EVERY = 20
_BLOCK = 64 * 1024


@dataclass(frozen=True)
class LogEntry:
    path: Path
    processes: tuple[str, ...]


@click.command("logs", epilog=EPILOG)
@click.argument("job")
@output_option
@click.option(
    "-p",
    "--process",
    "process",
    metavar="NAME",
    help="A process of the plan (see the listing), `supervisor` (the sweep log), or a file "
    "below the job's logs/ folder.",
)
@click.option(
    "-f", "--follow", is_flag=True, help="Keep printing new lines until the job has ended."
)
@click.option(
    "-n",
    "--lines",
    default=100,
    show_default=True,
    type=click.IntRange(min=0),
    help="How many last lines to print first.",
)
@json_option(
    'Listing: {"job_id", "log_dir", "files": [{"path", "bytes", "processes"}]}; with --process: '
    '{"job_id", "process", "path", "lines": [...]}.'
)
@click.pass_obj
def command(
    edge: Edge,
    *,
    job: str,
    output: str | None,
    process: str | None,
    follow: bool,
    lines: int,
    as_json: bool,
) -> None:
    """List the log files of job JOB with their sizes and the process that writes each, or print
    the last lines of one process's log (--process), optionally following it (--follow).

    Only files inside the job's logs/ folder are shown; any other path is refused (exit 2).
    """
    from srt_cli.errors import CliUsageError
    from srt_cli.jobs import job_base, parse_job_id, read_plan

    if follow and as_json:
        raise CliUsageError("--follow prints the log as it grows; drop --json")
    if follow and process is None:
        raise CliUsageError("--follow needs --process NAME (srtctl logs JOB lists the processes)")
    ref = parse_job_id(job)
    job_dir = job_base(edge, output) / ref.job_id
    if not job_dir.is_dir():
        raise CliUsageError(
            f"job {ref.job_id}: no job folder {job_dir}; pass -o <output base> if the job was "
            "written elsewhere"
        )
    log_dir = job_dir / "logs"
    plan = read_plan(job_dir)
    entries = build_entries(log_dir, plan, ref.job_id)
    if process is None:
        _list(ref.job_id, log_dir, entries, as_json=as_json)
        return
    path = resolve_process_log(log_dir, entries, process)
    if not path.is_file() and not follow:
        raise CliUsageError(f"{path}: no such log yet ({process} has not written it)")
    tail, offset = read_tail(path, lines, partial=not follow)
    if as_json:
        record = {"job_id": ref.job_id, "process": process, "path": str(path), "lines": tail}
        click.echo(json.dumps(record))
        return
    for line in tail:
        click.echo(line)
    if follow:
        _follow(edge, ref, job_dir, path, offset)


def _owner_map(log_dir: Path, plan: JobPlan | None, job_id: str) -> dict[Path, list[str]]:
    owners: dict[Path, list[str]] = {log_dir / f"sweep_{job_id}.log": ["supervisor"]}
    if plan is None:
        return owners
    for spec in (*plan.processes, *plan.teardown):
        log = Path(spec.log_file)
        path = log if log.is_absolute() else log_dir / log
        owners.setdefault(path, []).append(spec.name)
    return owners


def build_entries(log_dir: Path, plan: JobPlan | None, job_id: str) -> list[LogEntry]:
    """Every file below ``log_dir`` plus every planned log not written yet, with its writers.

    A log kept from before a restart (``<log>.<n>``) belongs to the same process.
    """
    owners = _owner_map(log_dir, plan, job_id)
    found = sorted(p for p in log_dir.rglob("*") if p.is_file()) if log_dir.is_dir() else []
    paths = sorted({*found, *owners})
    entries = []
    for path in paths:
        names = owners.get(path)
        if names is None and path.suffix[1:].isdigit():
            previous = owners.get(path.with_suffix(""))
            if previous is not None:
                names = [f"{n} (before restart {path.suffix[1:]})" for n in previous]
        entries.append(LogEntry(path=path, processes=tuple(names or ())))
    return entries


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return None


def _relative(path: Path, log_dir: Path) -> str:
    return str(path.relative_to(log_dir)) if path.is_relative_to(log_dir) else str(path)


def _list(job_id: str, log_dir: Path, entries: list[LogEntry], *, as_json: bool) -> None:
    from srt_cli.tables import render_table

    if as_json:
        files = [
            {
                "path": _relative(e.path, log_dir),
                "bytes": _size(e.path),
                "processes": list(e.processes),
            }
            for e in entries
        ]
        click.echo(json.dumps({"job_id": job_id, "log_dir": str(log_dir), "files": files}))
        return
    rows = []
    for e in entries:
        size = _size(e.path)
        rows.append(
            [
                _relative(e.path, log_dir),
                "not written yet" if size is None else str(size),
                ", ".join(e.processes) or "-",
            ]
        )
    click.echo(f"logs of job {job_id}: {log_dir}")
    click.echo(render_table(("file", "bytes", "process"), rows))


def resolve_process_log(log_dir: Path, entries: list[LogEntry], name: str) -> Path:
    """The log of process ``name`` (or ``supervisor``, or a file below ``log_dir``).

    Anything that resolves outside ``log_dir`` is refused (exit 2).
    """
    from srt_cli.errors import CliUsageError

    root = log_dir.resolve()
    by_name = {p: e.path for e in entries for p in e.processes if "(" not in p}
    path = by_name.get(name)
    if path is None:
        candidate = log_dir / name
        if not candidate.resolve().is_relative_to(root):
            raise CliUsageError(
                f"{name!r} is outside the job's log folder {log_dir}; give a process name or a "
                "file below logs/ (srtctl logs JOB lists them)"
            )
        if not candidate.is_file():
            import difflib

            close = difflib.get_close_matches(name, sorted(by_name), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            known = ", ".join(sorted(by_name))
            raise CliUsageError(
                f"{name!r} is not a process of this job nor a file below {log_dir}{hint}; "
                f"processes: {known}"
            )
        path = candidate
    if not path.resolve().is_relative_to(root):
        raise CliUsageError(
            f"the log of {name} is {path}, outside the job's log folder {log_dir}; refusing to "
            "read it"
        )
    return path


def read_tail(path: Path, count: int, *, partial: bool) -> tuple[list[str], int]:
    """The last ``count`` lines of ``path`` and the offset just after them.

    A last line without its newline yet counts only with ``partial`` (``--follow`` leaves it for
    when it is complete).
    """
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return [], 0
    with handle:
        end = handle.seek(0, 2)
        data = b""
        start = end
        while start > 0 and data.count(b"\n") <= count:
            start = max(0, start - _BLOCK)
            handle.seek(start)
            data = handle.read(end - start)
    if not partial:
        data = data[: data.rfind(b"\n") + 1]
    lines = data.decode(errors="replace").splitlines()
    return (lines[-count:] if count else []), start + len(data)


def _job_ended(edge: Edge, ref: JobRef, job_dir: Path, polls: int) -> bool:
    from srt_cli.jobs import is_final, query_job, read_status

    if is_final(read_status(job_dir)):
        return True
    if ref.kind == "slurm" and polls % _SLURM_EVERY == 0:
        found = query_job(edge.environ, ref.job_id, history=False)
        # Gone from squeue (not merely: squeue missing or failing) means the allocation ended.
        return not found.rows and found.note is not None and found.note.startswith("not known")
    return False


def _follow(edge: Edge, ref: JobRef, job_dir: Path, path: Path, offset: int) -> None:
    pending = b""

    def drain() -> bool:
        nonlocal offset, pending
        size = _size(path)
        if size is None:
            return False
        if size < offset:  # truncated or replaced: start over
            offset, pending = 0, b""
        if size == offset:
            return False
        with path.open("rb") as handle:
            handle.seek(offset)
            data = handle.read(size - offset)
        offset += len(data)
        pending += data
        *complete, pending = pending.split(b"\n")
        for line in complete:
            click.echo(line.decode(errors="replace"))
        return True

    polls = 0
    try:
        while True:
            time.sleep(POLL_SECONDS)
            polls += 1
            if drain():
                continue
            if _job_ended(edge, ref, job_dir, polls):
                drain()
                break
    except KeyboardInterrupt:
        pass
    if pending:
        click.echo(pending.decode(errors="replace"))
