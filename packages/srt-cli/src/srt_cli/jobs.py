"""Reading a job folder (``<output>/<job_id>/``) and asking Slurm about jobs, for the job commands
(status, logs, cancel, monitor).

The folder is what the runtime writes (docs/design.md#files-a-run-writes): ``status.json``
(``srt_runtime.status.StatusEvent``) and ``status_events.jsonl`` (``srt_runtime.status.RunEvent``:
stage changes, process started / ready / exited / restarted, health passed, benchmark progress;
workers ready and the benchmark's progress come from these events, never from log prose),
``plan.json``
(``srt_planner.plan.JobPlan``), ``logs/sweep_<job_id>.log`` (the supervisor's log),
``logs/benchmark-rollup.json`` (srt_schema.rollup) and ``<job_id>.json`` (apply's metadata).
``build_*`` functions are pure; ``read_*``, ``query_*`` and ``find_*`` do I/O. Nothing here prints.

Why one module of ~450 lines: it is the one helper the job commands share, in three sections
(Slurm, the job folder, a local run's supervisor); each can become its own module when it grows.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from srt_cli.errors import CliUsageError, SlurmError

if TYPE_CHECKING:
    from srt_cli.environment import Edge
    from srt_planner.plan import JobPlan
    from srt_runtime.status import RunEvent, StatusEvent
    from srt_schema.job_files import JobRecord
    from srt_schema.rollup import Rollup

__all__ = [
    "SQUEUE_FORMAT",
    "JobRef",
    "SlurmLookup",
    "SlurmRow",
    "build_bench_progress",
    "build_dead_note",
    "build_listing",
    "build_results",
    "build_summary",
    "build_validity",
    "count_ready_workers",
    "describe_process",
    "find_job_folders",
    "find_supervisors",
    "is_final",
    "is_supervisor_of",
    "job_base",
    "parse_job_id",
    "parse_squeue",
    "query_job",
    "query_mine",
    "read_cause",
    "read_job_record",
    "read_plan",
    "read_recorded_pid",
    "read_rollup",
    "read_status",
    "sweep_log",
]

#: ``srtctl apply --local`` names local jobs ``local-<UTC timestamp>[-n]`` (applying.py).
_LOCAL_ID = re.compile(r"local-\d{8}T\d{6}Z(-\d+)?")
_SLURM_ID = re.compile(r"\d+")
#: A folder under the output base that is a job's (a Slurm job id or a local job id).
_JOB_FOLDER = re.compile(rf"{_SLURM_ID.pattern}|{_LOCAL_ID.pattern}")
#: squeue columns: job id, state, time used, time limit, node count, reason or node list, name.
SQUEUE_FORMAT = "%i|%T|%M|%l|%D|%R|%j"
SQUEUE_ARG = f"--format={SQUEUE_FORMAT}"
#: The same columns from accounting, for jobs that left the queue (allocations only).
SACCT_ARGS = (
    "-X",
    "--noheader",
    "--parsable2",
    "--format=JobID,State,Elapsed,Timelimit,NNodes,NodeList,JobName",
)
_UNKNOWN = "not known to Slurm (finished, or never submitted)"
#: The runtime's log line format: ``%(asctime)s %(levelname)s %(message)s``.
_LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ (?P<level>[A-Z]+) (?P<message>.*)$")
#: Stages after which the benchmark either ran or never will.
_AFTER_BENCHMARK = ("post_eval", "serving", "cleanup")


@dataclass(frozen=True)
class JobRef:
    """A job id as given on the command line, and whether Slurm or this machine runs it."""

    job_id: str
    kind: Literal["slurm", "local"]


def parse_job_id(raw: str) -> JobRef:
    """``4242`` is a Slurm job; ``local-20261129T153251Z`` a local run (apply --local)."""
    if _SLURM_ID.fullmatch(raw):
        return JobRef(job_id=raw, kind="slurm")
    if _LOCAL_ID.fullmatch(raw):
        return JobRef(job_id=raw, kind="local")
    raise CliUsageError(
        f"job_id must be a Slurm job id (digits) or a local job id "
        f"(local-YYYYmmddTHHMMSSZ), got {raw!r}"
    )


def job_base(edge: Edge, output: str | None) -> Path:
    """The output base (``-o`` > srtslurm.yaml ``output_dir`` > default), as apply uses it."""
    from srt_cli.environment import read_cluster
    from srt_cli.paths import output_base

    return Path(output_base(edge, read_cluster(edge).config, output))


# -- Slurm ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class SlurmRow:
    """One job as ``squeue`` (SQUEUE_FORMAT) or, once it left the queue, ``sacct`` sees it."""

    job_id: str
    state: str
    elapsed: str
    time_limit: str
    nodes: str
    #: squeue: the pending reason or the node list; sacct: the node list.
    reason: str
    name: str
    source: Literal["squeue", "sacct"] = "squeue"

    @property
    def base_id(self) -> str:
        """The job id without a heterogeneous component suffix (``4242+1`` -> ``4242``)."""
        return self.job_id.split("+", 1)[0]

    def to_json(self) -> dict[str, str]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class SlurmLookup:
    """What Slurm said: the rows, or a note why there are none (never an error)."""

    rows: tuple[SlurmRow, ...]
    note: str | None = None


def parse_squeue(text: str, source: Literal["squeue", "sacct"] = "squeue") -> tuple[SlurmRow, ...]:
    """Rows of ``|``-separated fields in SlurmRow order (SQUEUE_FORMAT, SACCT_FORMAT)."""
    rows = []
    for line in text.splitlines():
        parts = line.split("|", 6)
        if len(parts) == 7:
            job_id, state, elapsed, limit, nodes, reason, name = (p.strip() for p in parts)
            rows.append(
                SlurmRow(
                    job_id=job_id,
                    state=state,
                    elapsed=elapsed,
                    time_limit=limit,
                    nodes=nodes,
                    reason=reason,
                    name=name,
                    source=source,
                )
            )
    return tuple(rows)


def _run_slurm(
    tool: Literal["squeue", "sacct"], environ: Mapping[str, str], args: Sequence[str]
) -> SlurmLookup:
    exe = shutil.which(tool, path=environ.get("PATH"))
    if exe is None:
        return SlurmLookup(rows=(), note=f"{tool} is not on PATH (no Slurm state)")
    try:
        done = subprocess.run(
            [exe, *args], capture_output=True, text=True, env=dict(environ), timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return SlurmLookup(rows=(), note=f"{tool} failed: {exc}")
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip()
        if "Invalid job id" in said:
            return SlurmLookup(rows=(), note=_UNKNOWN)
        last = said.splitlines()[-1] if said else "no output"
        return SlurmLookup(rows=(), note=f"{tool} failed (exit {done.returncode}): {last}")
    return SlurmLookup(rows=parse_squeue(done.stdout, tool))


def query_job(environ: Mapping[str, str], job_id: str, *, history: bool = True) -> SlurmLookup:
    """``squeue --job <id>``, then (``history``) ``sacct`` for a job that left the queue; a job
    neither knows is a note, not an error."""
    found = _run_slurm("squeue", environ, ["--job", job_id, "--noheader", SQUEUE_ARG])
    rows = tuple(r for r in found.rows if r.base_id == job_id)
    if rows:
        return SlurmLookup(rows=rows)
    note = found.note or _UNKNOWN
    if history and shutil.which("sacct", path=environ.get("PATH")) is not None:
        past = _run_slurm("sacct", environ, ["-j", job_id, *SACCT_ARGS])
        rows = tuple(r for r in past.rows if r.base_id == job_id)
        if rows:
            return SlurmLookup(rows=rows)
    return SlurmLookup(rows=(), note=note)


def query_mine(environ: Mapping[str, str]) -> SlurmLookup:
    """``squeue --me``: every job of the current user."""
    return _run_slurm("squeue", environ, ["--me", "--noheader", SQUEUE_ARG])


# -- the job folder ------------------------------------------------------------------------


def _read_json_file(path: Path, decode: Any) -> Any:
    import msgspec

    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:  # a folder where the file should be, no permission, ...
        raise SlurmError(f"{path}: cannot be read: {exc.strerror or exc}") from exc
    try:
        return decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise SlurmError(f"{path}: cannot be read: {exc}") from exc


def read_status(job_dir: Path) -> StatusEvent | None:
    """``status.json`` (the runtime's latest StatusEvent), or None before the job started."""
    import msgspec

    from srt_runtime.status import StatusEvent

    return _read_json_file(  # type: ignore[no-any-return]
        job_dir / "status.json", lambda b: msgspec.json.decode(b, type=StatusEvent)
    )


def read_events(job_dir: Path) -> list[RunEvent]:
    """Every event of ``status_events.jsonl`` (decoded with the runtime's structs)."""
    from srt_runtime.status import decode_event_lines

    path = job_dir / "status_events.jsonl"
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise SlurmError(f"{path}: cannot be read: {exc.strerror or exc}") from exc
    return decode_event_lines(data)


def read_plan(job_dir: Path) -> JobPlan | None:
    import msgspec

    from srt_planner.plan import JobPlan

    return _read_json_file(  # type: ignore[no-any-return]
        job_dir / "plan.json", lambda b: msgspec.json.decode(b, type=JobPlan)
    )


def read_job_record(path: Path) -> JobRecord | None:
    """``<job_id>.json`` with its one decoder (None: missing or not a job record)."""
    from srt_schema.job_files import decode_job_record

    return _read_json_file(path, decode_job_record)  # type: ignore[no-any-return]


def is_final(status: StatusEvent | None) -> bool:
    """The runtime's last event: ``cleanup`` with any status but ``running`` (completed, failed,
    cancelled)."""
    return status is not None and status.stage == "cleanup" and status.status != "running"


def sweep_log(job_dir: Path, job_id: str) -> Path:
    return job_dir / "logs" / f"sweep_{job_id}.log"


def _log_messages(path: Path) -> list[tuple[str, str]]:
    try:
        text = path.read_text(errors="replace")
    except OSError:  # missing, or not a readable file: no messages to show
        return []
    found: list[tuple[str, str]] = []
    for line in text.splitlines():
        match = _LOG_LINE.match(line)
        if match:
            found.append((match["level"], match["message"]))
        elif found:  # a multi-line message (the diagnosis block) continues
            level, message = found[-1]
            found[-1] = (level, f"{message}\n{line}")
    return found


def count_ready_workers(plan: JobPlan, events: Sequence[RunEvent]) -> tuple[int, int]:
    """(ready, total) worker processes of the plan, from the run's events.

    A worker counts once its ``ready`` event arrived (a relaunch counts for the planned
    process it replaces); a worker without a readiness probe once it started; after the health
    gate passed, every worker.
    """
    from srt_runtime.status import HealthPassed, ProcessEvent

    workers = [p for p in plan.processes if p.kind == "worker"]
    ready: set[str] = set()
    started: set[str] = set()
    healthy = False
    for event in events:
        if isinstance(event, HealthPassed):
            healthy = True
        elif isinstance(event, ProcessEvent) and event.what == "ready":
            ready.add(event.process)
        elif isinstance(event, ProcessEvent) and event.what == "started":
            started.add(event.process)
    count = sum(
        1
        for w in workers
        if healthy or w.name in ready or (w.readiness is None and w.name in started)
    )
    return count, len(workers)


def build_benchmark_phase(
    plan: JobPlan | None, status: StatusEvent | None, seen: Collection[str], has_rollup: bool
) -> str:
    """``none`` (no benchmark planned), ``waiting``, ``running``, ``post-eval``, ``finished``
    (the benchmark ran), or ``not reached`` (the job ended before it)."""
    if has_rollup:
        return "finished"
    if plan is not None and not any(p.phase == "benchmark" for p in plan.processes):
        return "none"
    if status is None:
        return "waiting"
    if status.stage == "benchmark" and status.status == "running":
        return "running"
    if status.stage == "post_eval" and status.status == "running":
        return "post-eval"
    if "benchmark" in seen and status.stage in _AFTER_BENCHMARK:
        return "finished"
    return "not reached" if is_final(status) else "waiting"


def build_bench_progress(events: Sequence[RunEvent]) -> str | None:
    """The benchmark client's last progress line (``concurrency 4: warmup ...``)."""
    from srt_runtime.status import BenchmarkProgress

    lines = [e.line for e in events if isinstance(e, BenchmarkProgress)]
    return lines[-1] if lines else None


def build_results(rollup: Rollup | None) -> list[dict[str, Any]]:
    """Per concurrency: request throughput, output tok/s, TTFT and ITL medians (rollup fields),
    and the window's verdict (``srt-bench validity``; None when not judged) with its codes."""
    if rollup is None:
        return []
    return [
        {
            "concurrency": run.concurrency,
            "request_throughput": run.request_throughput,
            "output_tok_s": run.throughput_toks,
            "ttft_p50_ms": run.ttft_median_ms,
            "itl_p50_ms": run.itl_median_ms,
            "verdict": run.validity.verdict if run.validity is not None else None,
            "reasons": [r.code for r in run.validity.reasons] if run.validity is not None else [],
        }
        for run in rollup.sorted_runs()
    ]


def build_validity(rollup: Rollup | None) -> dict[str, Any] | None:
    """The run's verdict and reasons (None: no rollup, or not judged)."""
    if rollup is None or rollup.validity is None:
        return None
    v = rollup.validity
    return {
        "verdict": v.verdict,
        "reasons": [{"code": r.code, "detail": r.detail} for r in v.reasons],
        "not_checked": [{"code": r.code, "detail": r.detail} for r in v.not_checked],
    }


def read_rollup(path: Path) -> Rollup | None:
    """``benchmark-rollup.json`` decoded with srt-schema's structs (None: not written yet)."""
    from srt_schema.rollup import decode_rollup

    return _read_json_file(path, decode_rollup)  # type: ignore[no-any-return]


def read_cause(job_dir: Path) -> dict[str, Any] | None:
    """The failure catalog's verdict on a failed job, from ``logs/diagnosis.json`` (the runtime
    writes it for a failed run): ``{cause, title, fix, evidence, what, reason}``; None when the
    job wrote no diagnosis. A record written before causes existed is matched here."""
    import msgspec

    from srt_runtime.catalog import load_catalog, match_cause
    from srt_runtime.diagnosis import DIAGNOSIS_FILE, DiagnosisRecord

    record = _read_json_file(
        job_dir / "logs" / DIAGNOSIS_FILE,
        lambda b: msgspec.json.decode(b, type=DiagnosisRecord),
    )
    if record is None:
        return None
    assert isinstance(record, DiagnosisRecord)
    cause, title, fix, evidence = record.cause, record.cause_title, record.fix, record.evidence
    if cause is None:
        lines = [record.reason, *([record.log_line] if record.log_line else [])]
        lines += [line.removeprefix("| ") for line in record.log_excerpt]
        found = match_cause(load_catalog(), lines, exit_code=record.exit_code)
        cause, title, fix, evidence = found.cause, found.title, found.fix, found.evidence
    return {
        "cause": cause,
        "title": title or "",
        "fix": fix or "",
        "evidence": evidence or "",
        "what": record.what,
        "reason": record.reason,
    }


def _first_existing(*paths: Path) -> Path | None:
    return next((p for p in paths if p.is_file()), None)


def build_summary(ref: JobRef, job_dir: Path, slurm: SlurmLookup | None) -> dict[str, Any]:
    """Everything ``srtctl status`` reports about one job, as a JSON-ready dict."""
    import msgspec

    from srt_runtime.status import StatusEvent

    exists = job_dir.is_dir()
    status = read_status(job_dir) if exists else None
    plan = read_plan(job_dir) if exists else None
    record = read_job_record(job_dir / f"{ref.job_id}.json") if exists else None
    from srt_schema.rollup import ROLLUP_FILE

    rollup_path = _first_existing(job_dir / "logs" / ROLLUP_FILE, job_dir / ROLLUP_FILE)
    rollup = read_rollup(rollup_path) if rollup_path is not None else None
    messages = _log_messages(sweep_log(job_dir, ref.job_id)) if exists else []
    events = read_events(job_dir) if exists else []
    workers = None
    if plan is not None:
        ready, total = count_ready_workers(plan, events)
        workers = {"ready": ready, "total": total}
    seen = {e.stage for e in events if isinstance(e, StatusEvent)}
    dashboard = _first_existing(
        job_dir / "perf_dashboard.html", job_dir / "logs" / "perf_dashboard.html"
    )
    row = slurm.rows[0] if slurm is not None and slurm.rows else None
    name = plan.job_name if plan is not None else (record.job_name if record else None)
    if name is None and row is not None:
        name = row.name
    live = exists and not is_final(status)
    supervisors = find_supervisors(job_dir) if ref.kind == "local" and live else None
    dead = build_dead_note(status, read_recorded_pid(job_dir), supervisors) if live else None
    return {
        "job_id": ref.job_id,
        "kind": ref.kind,
        "job_dir": str(job_dir),
        "exists": exists,
        "job_name": name,
        "stage": status.stage if status is not None else None,
        # "dead": status.json says running, but its recorded supervisor is gone (SIGKILL, OOM).
        "status": "dead" if dead else (status.status if status is not None else None),
        "message": dead or (status.message if status is not None else ""),
        "exit_code": status.exit_code if status is not None else None,
        "updated_at": status.at if status is not None else None,
        "ended": is_final(status) or dead is not None,
        "workers": workers,
        "benchmark": build_benchmark_phase(plan, status, seen, rollup is not None),
        "benchmark_progress": build_bench_progress(events),
        "results": build_results(rollup),
        "validity": build_validity(rollup),
        "rollup": str(rollup_path) if rollup_path is not None else None,
        "dashboard": str(dashboard) if dashboard is not None else None,
        "errors": [m for level, m in messages if level == "ERROR"][-10:],
        # The failure catalog's cause and fix of a failed run (logs/diagnosis.json), or None.
        "cause": read_cause(job_dir) if exists else None,
        "slurm": row.to_json() if row is not None else None,
        "slurm_note": slurm.note if slurm is not None else None,
        "metadata": msgspec.to_builtins(record) if record is not None else None,
        # A local run that has not ended: its supervisor's pids here ([] = none runs here).
        "supervisor": supervisors,
    }


def find_job_folders(base: Path) -> list[Path]:
    """The job folders under the output base (named by a Slurm or local job id), sorted."""
    if not base.is_dir():
        return []
    return sorted(p for p in base.iterdir() if p.is_dir() and _JOB_FOLDER.fullmatch(p.name))


def build_listing(job_dir: Path) -> dict[str, Any]:
    """One row of ``srtctl list``: id, name, status, stage, started, exit code (from the job
    folder's events, plan and apply metadata); a local run whose supervisor is gone is ``dead``."""
    from srt_runtime.status import StatusEvent

    ref = parse_job_id(job_dir.name)
    status = read_status(job_dir)
    stages = [e for e in read_events(job_dir) if isinstance(e, StatusEvent)]
    plan = read_plan(job_dir)
    record = read_job_record(job_dir / f"{ref.job_id}.json")
    name = plan.job_name if plan is not None else (record.job_name if record else None)
    dead = None
    if ref.kind == "local" and status is not None and not is_final(status):
        dead = build_dead_note(status, read_recorded_pid(job_dir), find_supervisors(job_dir))
    return {
        "job_id": ref.job_id,
        "kind": ref.kind,
        "job_name": name,
        "status": "dead" if dead else (status.status if status is not None else None),
        "stage": status.stage if status is not None else None,
        "started_at": stages[0].at if stages else None,
        "updated_at": status.at if status is not None else None,
        "exit_code": status.exit_code if status is not None else None,
        "job_dir": str(job_dir),
    }


def build_dead_note(
    status: StatusEvent | None, recorded: int | None, supervisors: list[int] | None
) -> str | None:
    """For a local run whose status is not final: why it is dead (its recorded supervisor pid
    is not among the live ``supervisors`` of the job), or None (alive, or not known)."""
    if status is None or recorded is None or supervisors is None or recorded in supervisors:
        return None
    return (
        f"supervisor {recorded} gone: the job ended during stage {status.stage} without a final "
        "status (its supervisor was killed); its watchdog kills what the job started "
        "(logs/local_processes.jsonl)"
    )


# -- a local run's supervisor (this machine's /proc) ---------------------------------------

_PROC = Path("/proc")


def read_recorded_pid(job_dir: Path) -> int | None:
    """The supervisor's ``pid`` in status.json (decoded as the runtime's StatusEvent), or None
    when none is recorded or the file is missing or unreadable."""
    try:
        status = read_status(job_dir)
    except SlurmError:  # unreadable or not a status event: no pid recorded
        return None
    pid = status.pid if status is not None else None
    return pid if pid is not None and pid > 0 else None


def _argv(pid: int) -> list[str] | None:
    try:
        raw = (_PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return None
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def describe_process(pid: int) -> str:
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
