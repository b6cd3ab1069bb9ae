"""status, logs, cancel and monitor over job folders built with the real structs (JobPlan from the
planner, the status events through the runtime's FileStatusSink and EventLog, the rollup from
srt_bench), and the
fake squeue / scancel in tests/fakes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest
from cli_testkit import DATA, FAKES, Invoke

from srt_bench.rollup import build_sa_bench_rollup, write_rollup
from srt_planner import plan_job
from srt_planner.plan import JobPlan
from srt_runtime import FileStatusSink, write_plan
from srt_runtime.status import EventLog, Stage, StatusValue
from srt_schema import ClusterConfig, load_recipe_text
from srt_schema.bench_result import BenchResult

SQUEUE_FORMAT = "--format=%i|%T|%M|%l|%D|%R|%j"
JOB_ID = "local-20261129T150000Z"
SACCT_ARGS = [
    "-X",
    "--noheader",
    "--parsable2",
    "--format=JobID,State,Elapsed,Timelimit,NNodes,NodeList,JobName",
]


class FixedClock:
    """Wall time for FileStatusSink: 2026-11-29 15:00:00 UTC plus one second per call."""

    def __init__(self) -> None:
        self.now = 1_795_964_400.0

    def monotonic(self) -> float:
        return 0.0

    def wall(self) -> float:
        self.now += 1.0
        return self.now

    def wait(self, event: threading.Event, timeout: float) -> bool:
        return event.is_set()


def build_job(
    base: Path,
    job_id: str,
    *,
    events: list[tuple[Stage, StatusValue, str, int | None]],
    log_lines: Sequence[str] = (),
    run: Sequence[Record] = (),
    rollup: bool = False,
    workers: int = 2,
) -> Path:
    """A job folder as the runtime leaves it: plan.json, status files, the sweep log, logs."""
    job_dir = base / job_id
    log_dir = job_dir / "logs"
    log_dir.mkdir(parents=True)
    text = (DATA / "mocker-agg.yaml").read_text().replace("workers: 1", f"workers: {workers}")
    (job,) = load_recipe_text(text, file="mocker-agg.yaml")
    plan = plan_job(job.recipe, ClusterConfig(), "node-01", job_id, log_dir=str(log_dir))
    write_plan(plan, job_dir / "plan.json")
    (job_dir / f"{job_id}.json").write_text(json.dumps({"job_id": job_id, "job_name": "agg"}))
    sink = FileStatusSink(job_dir, job_id, FixedClock())
    for stage, status, message, code in events:
        sink.emit(stage, status, message, code)
    for record in run:
        record(sink.log, plan)
    sweep = "".join(f"2026-11-29 15:00:{i:02d},000 {line}\n" for i, line in enumerate(log_lines))
    (log_dir / f"sweep_{job_id}.log").write_text(sweep)
    for spec in plan.processes:
        if spec.kind == "worker":
            (log_dir / spec.log_file).write_text(f"{spec.name} line 1\n{spec.name} line 2\n")
    if rollup:
        results = [
            {
                "max_concurrency": c,
                "model_id": "qwen3",
                "request_throughput": 1.5 * c,
                "output_throughput": 100.0 * c,
                "median_ttft_ms": 20.0 + c,
                "median_itl_ms": 5.25,
            }
            for c in (2, 1)
        ]
        typed = [msgspec.convert(r, BenchResult) for r in results]
        roll = build_sa_bench_rollup(typed, isl=128, osl=128, timestamp="2026-11-29T15:00:00Z")
        write_rollup(log_dir, roll, None)
    return job_dir


RUNNING: list[tuple[Stage, StatusValue, str, int | None]] = [
    ("starting", "running", "", None),
    ("head_infrastructure", "running", "", None),
    ("workers", "running", "", None),
]
FINISHED: list[tuple[Stage, StatusValue, str, int | None]] = [
    *RUNNING,
    ("frontend", "running", "", None),
    ("health", "running", "waiting for http://node-01:8000/health", None),
    ("telemetry", "running", "", None),
    ("benchmark", "running", "", None),
    ("cleanup", "running", "", None),
    ("cleanup", "completed", "", 0),
]
#: What the supervisor records while the job runs, written with the runtime's EventLog.
Record = Callable[[EventLog, JobPlan], None]


def start_worker(index: int) -> Record:
    def record(log: EventLog, plan: JobPlan) -> None:
        spec = [p for p in plan.processes if p.kind == "worker"][index]
        log.process("started", name=spec.name, process=spec.name, kind="worker", node="node-01")

    return record


def health_passed(log: EventLog, plan: JobPlan) -> None:
    log.health(plan.health.url, 1.5)


STARTED_ONE: list[Record] = [start_worker(0)]
HEALTHY: list[Record] = [*STARTED_ONE, start_worker(1), health_passed]


@pytest.fixture
def base() -> Path:
    return Path.cwd() / "outputs"


@pytest.fixture
def slurm(tmp_path: Path) -> dict[str, Any]:
    """Fake squeue/scancel first on PATH; ``jobs`` is what they know (write it with set_jobs)."""
    state = tmp_path / "slurm"
    state.mkdir()
    return {"PATH": f"{FAKES}:/usr/bin:/bin", "FAKE_SLURM_DIR": str(state), "USER": "tester"}


@pytest.fixture
def no_slurm(tmp_path: Path) -> dict[str, str]:
    folder = tmp_path / "empty-bin"
    folder.mkdir()
    return {"PATH": str(folder)}


def set_jobs(env: dict[str, Any], *jobs: dict[str, str]) -> None:
    Path(env["FAKE_SLURM_DIR"], "jobs.json").write_text(json.dumps(list(jobs)))


def calls(env: dict[str, Any], tool: str) -> list[list[str]]:
    path = Path(env["FAKE_SLURM_DIR"], f"{tool}_calls.jsonl")
    if not path.exists():
        return []
    return [json.loads(line)["args"] for line in path.read_text().splitlines()]


def job_row(job_id: str, state: str = "RUNNING", user: str = "tester") -> dict[str, str]:
    return {
        "id": job_id,
        "state": state,
        "elapsed": "4:02",
        "limit": "1:00:00",
        "nodes": "1",
        "reason": "node-01",
        "name": "agg",
        "user": user,
    }


# -- status ---------------------------------------------------------------------------------


def test_status_of_a_finished_job_shows_results(
    invoke: Invoke, base: Path, no_slurm: dict[str, str]
) -> None:
    job_dir = build_job(base, "4242", events=FINISHED, run=HEALTHY, rollup=True)
    (job_dir / "logs" / "benchmark.out").write_text(f"[srt-bench] rollup: {job_dir}/logs\n")
    result = invoke("status", "4242", env=no_slurm)
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"job 4242 (mocker-agg): {job_dir}\n"
        "  slurm:      squeue is not on PATH (no Slurm state)\n"
        "  stage:      cleanup (completed) at 2026-11-29T15:00:09.000+00:00, exit code 0\n"
        "  workers:    2/2 ready\n"
        "  benchmark:  finished\n"
        "  results:\n"
        "    concurrency  req/s  output tok/s  TTFT p50 ms  ITL p50 ms  verdict\n"
        "    -----------  -----  ------------  -----------  ----------  -------\n"
        "    1            1.50   100.00        21.00        5.25        -\n"
        "    2            3.00   200.00        22.00        5.25        -\n"
        f"  rollup:     {job_dir}/logs/benchmark-rollup.json\n"
    )


def test_status_json_of_a_running_slurm_job(
    invoke: Invoke, base: Path, slurm: dict[str, Any]
) -> None:
    job_dir = build_job(base, "4242", events=RUNNING, run=STARTED_ONE)
    set_jobs(slurm, job_row("4242"))
    result = invoke("status", "4242", "--json", env=slurm)
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    doc = json.loads(result.stdout)
    assert doc["job_id"] == "4242"
    assert doc["kind"] == "slurm"
    assert doc["job_dir"] == str(job_dir)
    assert (doc["stage"], doc["status"], doc["ended"]) == ("workers", "running", False)
    assert doc["workers"] == {"ready": 1, "total": 2}
    assert doc["benchmark"] == "waiting"
    assert doc["results"] == []
    assert doc["slurm"] == {
        "job_id": "4242",
        "state": "RUNNING",
        "elapsed": "4:02",
        "time_limit": "1:00:00",
        "nodes": "1",
        "reason": "node-01",
        "name": "agg",
        "source": "squeue",
    }
    assert doc["slurm_note"] is None
    # the job record through its one decoder (srt_schema.job_files.JobRecord): unset fields read
    # as their defaults
    meta = doc["metadata"]
    assert (meta["job_id"], meta["job_name"], meta["version"]) == ("4242", "agg", "2.0")
    assert meta["model"] is None and meta["tags"] == []
    assert calls(slurm, "squeue") == [["--job", "4242", "--noheader", SQUEUE_FORMAT]]


def test_status_text_shows_the_slurm_state_and_errors(
    invoke: Invoke, base: Path, slurm: dict[str, Any]
) -> None:
    lines = ["ERROR Run failed: agg_1_node-01 exited with code 3\nnext line"]
    build_job(base, "4242", events=RUNNING, log_lines=lines, run=STARTED_ONE)
    set_jobs(slurm, job_row("4242", state="COMPLETING"))
    result = invoke("status", "4242", env=slurm)
    assert result.exit_code == 0, result.output
    out = result.stdout.splitlines()
    assert out[1] == "  slurm:      COMPLETING 4:02 of 1:00:00 (1 node(s), node-01)"
    assert out[3] == "  workers:    1/2 ready"
    assert out[-3:] == [
        "  errors (last lines of the sweep log):",
        "    Run failed: agg_1_node-01 exited with code 3",
        "    next line",
    ]


def test_status_while_the_benchmark_runs(
    invoke: Invoke, base: Path, no_slurm: dict[str, str]
) -> None:
    events = [e for e in FINISHED if e[0] != "cleanup"]
    progress = [
        lambda log, _plan: log.progress("benchmark", "concurrency 1: 1/1 ok in 0.50 s, 2.00 req/s"),
        lambda log, _plan: log.progress("benchmark", "concurrency 2: warmup with 2 requests"),
    ]
    build_job(base, "4242", events=events, run=[*HEALTHY, *progress])
    result = invoke("status", "4242", env=no_slurm)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[2:5] == [
        "  stage:      benchmark (running) at 2026-11-29T15:00:07.000+00:00",
        "  workers:    2/2 ready",
        "  benchmark:  running (last: concurrency 2: warmup with 2 requests)",
    ]
    doc = json.loads(invoke("status", "4242", "--json", env=no_slurm).stdout)
    assert doc["benchmark_progress"] == "concurrency 2: warmup with 2 requests"
    assert doc["results"] == []


def test_status_of_a_heterogeneous_slurm_job(
    invoke: Invoke, base: Path, slurm: dict[str, Any]
) -> None:
    build_job(base, "4242", events=RUNNING)
    set_jobs(slurm, job_row("4242+0"), job_row("4242+1"))
    doc = json.loads(invoke("status", "4242", "--json", env=slurm).stdout)
    assert doc["slurm"]["job_id"] == "4242+0"
    assert doc["slurm"]["state"] == "RUNNING"
    monitor = invoke("monitor", "--once", "--json", env=slurm)
    assert [json.loads(line)["job_id"] for line in monitor.stdout.splitlines()] == ["4242"]


def test_monitor_reports_an_unreadable_folder_and_goes_on(
    invoke: Invoke, base: Path, no_slurm: dict[str, str]
) -> None:
    build_job(base, JOB_ID, events=RUNNING)
    broken = base / "local-20261129T140000Z"
    broken.mkdir()
    (broken / "status.json").write_text('{"job_id": "x"')
    result = invoke("monitor", "--once", "--json", env=no_slurm)
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["job_id"] for line in result.stdout.splitlines()] == [JOB_ID]
    assert result.stderr.splitlines() == [
        "note: squeue is not on PATH (no Slurm state)",
        f"note: {broken / 'status.json'}: cannot be read: Input data was truncated",
    ]


def test_status_of_a_job_slurm_forgot(invoke: Invoke, base: Path, slurm: dict[str, Any]) -> None:
    build_job(base, "4242", events=FINISHED, run=HEALTHY)
    set_jobs(slurm)
    doc = json.loads(invoke("status", "4242", "--json", env=slurm).stdout)
    assert doc["slurm"] is None
    assert doc["slurm_note"] == "not known to Slurm (finished, or never submitted)"
    assert calls(slurm, "sacct") == [["-j", "4242", *SACCT_ARGS]]
    assert doc["ended"] is True
    assert doc["benchmark"] == "finished"


def test_status_of_a_job_with_no_folder(invoke: Invoke, base: Path, slurm: dict[str, Any]) -> None:
    set_jobs(slurm, {**job_row("77", state="PENDING"), "elapsed": "0:00", "reason": "(Priority)"})
    pending = invoke("status", "77", "--json", env=slurm)
    assert pending.exit_code == 0, pending.output
    doc = json.loads(pending.stdout)
    assert (doc["exists"], doc["stage"], doc["slurm"]["state"]) == (False, None, "PENDING")
    assert invoke("status", "77", env=slurm).stdout == (
        f"job 77 (agg): {base / '77'}\n"
        "  folder:     missing (the job has not started writing it, or use -o)\n"
        "  slurm:      PENDING 0:00 of 1:00:00 (1 node(s), Priority)\n"
        "  stage:      not started (no status.json yet)\n"
        "  benchmark:  waiting\n"
    )
    unknown = invoke("status", "78", env=slurm)
    assert unknown.exit_code == 2
    assert unknown.stderr == (
        f"error: job 78: no job folder {base / '78'} and Slurm says: not known to Slurm "
        "(finished, or never submitted); pass -o <output base> if the job was written elsewhere\n"
    )


def test_status_follows_the_output_option(
    invoke: Invoke, tmp_path: Path, no_slurm: dict[str, str]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    build_job(elsewhere, JOB_ID, events=RUNNING)
    result = invoke("status", JOB_ID, "-o", str(elsewhere), env=no_slurm)
    assert result.exit_code == 0, result.output
    assert "slurm:" not in result.stdout
    assert result.stdout.splitlines()[1:3] == [
        "  stage:      workers (running) at 2026-11-29T15:00:03.000+00:00",
        "  note:       no supervisor of this job runs on this machine: it was stopped without a "
        "final status (or runs on another machine)",
    ]
    doc = json.loads(invoke("status", JOB_ID, "-o", str(elsewhere), "--json", env=no_slurm).stdout)
    assert doc["supervisor"] == []


@pytest.mark.parametrize("name", ["status", "logs", "cancel"])
def test_a_malformed_job_id_is_a_usage_error(invoke: Invoke, name: str) -> None:
    result = invoke(name, "../etc")
    assert result.exit_code == 2
    assert result.stderr == (
        "error: job_id must be a Slurm job id (digits) or a local job id "
        "(local-YYYYmmddTHHMMSSZ), got '../etc'\n"
    )


# -- logs -----------------------------------------------------------------------------------


def test_logs_lists_files_sizes_and_processes(
    invoke: Invoke, base: Path, no_slurm: dict[str, str]
) -> None:
    job_dir = build_job(base, "4242", events=RUNNING, run=STARTED_ONE)
    logs = job_dir / "logs"
    (logs / "node-01_agg_w0.out.1").write_text("before the restart\n")
    result = invoke("logs", "4242", "--json", env=no_slurm)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["log_dir"] == str(logs)
    files = {f["path"]: (f["bytes"], f["processes"]) for f in doc["files"]}
    assert files["node-01_agg_w0.out"] == (42, ["agg_0_node-01"])
    assert files["node-01_agg_w0.out.1"] == (19, ["agg_0_node-01 (before restart 1)"])
    assert files["sweep_4242.log"] == ((logs / "sweep_4242.log").stat().st_size, ["supervisor"])
    assert files["benchmark.out"] == (None, ["benchmark"])
    text = invoke("logs", "4242", env=no_slurm).stdout.splitlines()
    assert text[0] == f"logs of job 4242: {logs}"
    assert any(
        line.split() == ["benchmark.out", "not", "written", "yet", "benchmark"] for line in text
    )
    assert any(line.split() == ["node-01_agg_w1.out", "42", "agg_1_node-01"] for line in text)


def test_logs_of_one_process(invoke: Invoke, base: Path, no_slurm: dict[str, str]) -> None:
    job_dir = build_job(base, "4242", events=RUNNING)
    log = job_dir / "logs" / "node-01_agg_w1.out"
    log.write_text("".join(f"line {i}\n" for i in range(1, 301)) + "partial")
    result = invoke("logs", "4242", "--process", "agg_1_node-01", "--lines", "3", env=no_slurm)
    assert result.exit_code == 0, result.output
    assert result.stdout == "line 299\nline 300\npartial\n"
    as_json = invoke("logs", "4242", "-p", "agg_1_node-01", "-n", "2", "--json", env=no_slurm)
    assert json.loads(as_json.stdout) == {
        "job_id": "4242",
        "process": "agg_1_node-01",
        "path": str(log),
        "lines": ["line 300", "partial"],
    }
    by_file = invoke("logs", "4242", "-p", "sweep_4242.log", env=no_slurm)
    assert by_file.exit_code == 0
    assert by_file.stdout == ""


def test_logs_refuses_paths_outside_the_log_folder(
    invoke: Invoke, base: Path, tmp_path: Path, no_slurm: dict[str, str]
) -> None:
    job_dir = build_job(base, "4242", events=RUNNING)
    secret = tmp_path / "secret.txt"
    secret.write_text("do not show\n")
    (job_dir / "logs" / "sneaky.out").symlink_to(secret)
    for name in ("../config.yaml", str(secret), "sneaky.out"):
        result = invoke("logs", "4242", "--process", name, env=no_slurm)
        assert result.exit_code == 2, name
        assert "do not show" not in result.output
        assert result.stderr == (
            f"error: {name!r} is outside the job's log folder {job_dir / 'logs'}; give a "
            "process name or a file below logs/ (srtctl logs JOB lists them)\n"
        )


def test_logs_unknown_process_suggests_one(
    invoke: Invoke, base: Path, no_slurm: dict[str, str]
) -> None:
    build_job(base, "4242", events=RUNNING)
    result = invoke("logs", "4242", "--process", "agg_0_node01", env=no_slurm)
    assert result.exit_code == 2
    assert result.stderr.startswith(
        "error: 'agg_0_node01' is not a process of this job nor a file below "
        f"{base / '4242' / 'logs'} (did you mean 'agg_0_node-01'?); processes: agg_0_node-01, "
    )


def test_logs_flag_rules(invoke: Invoke, base: Path, no_slurm: dict[str, str]) -> None:
    build_job(base, "4242", events=RUNNING)
    both = invoke("logs", "4242", "-p", "benchmark", "--follow", "--json", env=no_slurm)
    assert (both.exit_code, both.stderr) == (
        2,
        "error: --follow prints the log as it grows; drop --json\n",
    )
    alone = invoke("logs", "4242", "--follow", env=no_slurm)
    assert alone.exit_code == 2
    not_yet = invoke("logs", "4242", "-p", "benchmark", env=no_slurm)
    assert not_yet.exit_code == 2
    assert not_yet.stderr == (
        f"error: {base / '4242' / 'logs' / 'benchmark.out'}: no such log yet "
        "(benchmark has not written it)\n"
    )


# -- cancel (Slurm; local cancellation runs real processes in test_job_commands_local.py) ----


def test_cancel_a_slurm_job(invoke: Invoke, slurm: dict[str, Any]) -> None:
    set_jobs(slurm, job_row("4242"), job_row("4243"))
    result = invoke("cancel", "4242", "--json", env=slurm)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "job_id": "4242",
        "kind": "slurm",
        "cancelled": True,
        "how": f"{FAKES / 'scancel'} --verbose 4242",
        "message": "cancelled Slurm job 4242 (scancel)",
    }
    assert calls(slurm, "scancel") == [["--verbose", "4242"]]
    left = json.loads(Path(slurm["FAKE_SLURM_DIR"], "jobs.json").read_text())
    assert [j["id"] for j in left] == ["4243"]


def test_status_after_cancel_comes_from_accounting(
    invoke: Invoke, base: Path, slurm: dict[str, Any]
) -> None:
    build_job(base, "4242", events=RUNNING, run=STARTED_ONE)
    set_jobs(slurm, job_row("4242"))
    assert invoke("cancel", "4242", env=slurm).exit_code == 0
    result = invoke("status", "4242", env=slurm)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1] == (
        f"  slurm:      CANCELLED by {os.getuid()} 4:02 of 1:00:00 (1 node(s), node-01), from sacct"
    )
    doc = json.loads(invoke("status", "4242", "--json", env=slurm).stdout)
    assert (doc["slurm"]["source"], doc["slurm_note"]) == ("sacct", None)


def test_cancel_shows_the_scancel_error_verbatim(invoke: Invoke, slurm: dict[str, Any]) -> None:
    set_jobs(slurm)
    result = invoke("cancel", "4242", env=slurm)
    assert result.exit_code == 4
    assert result.stderr == (
        f"error: `{FAKES / 'scancel'} --verbose 4242` failed (exit 0):\n"
        "scancel: Terminating job 4242\n"
        "scancel: error: Kill job error on job id 4242: Invalid job id specified\n"
    )


def test_cancel_without_scancel(invoke: Invoke, no_slurm: dict[str, str]) -> None:
    result = invoke("cancel", "4242", env=no_slurm)
    assert result.exit_code == 4
    assert result.stderr == (
        "error: scancel is not on PATH; run srtctl cancel on a Slurm login node\n"
    )


# -- monitor --------------------------------------------------------------------------------


def test_monitor_once_table(invoke: Invoke, base: Path, slurm: dict[str, Any]) -> None:
    build_job(base, "4242", events=RUNNING, run=STARTED_ONE)
    build_job(base, "4100", events=FINISHED, run=HEALTHY, rollup=True)
    build_job(base, "local-20261129T150000Z", events=RUNNING, run=HEALTHY)
    build_job(base, "local-20261129T140000Z", events=FINISHED, run=HEALTHY)
    set_jobs(slurm, job_row("4242"), job_row("4300", "PENDING"), job_row("9", user="other"))
    result = invoke("monitor", "--once", env=slurm)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("srtctl monitor: ")
    assert lines[0].endswith(f"; output base {base}")
    rows = [line.split() for line in lines[3:]]
    assert rows == [
        [
            "4242",
            "mocker-agg",
            "RUNNING",
            "workers",
            "1/2",
            "waiting",
            "2026-11-29T15:00:03.000+00:00",
        ],
        ["4300", "agg", "PENDING", "-", "-", "waiting", "-"],
        [
            "local-20261129T150000Z",
            "mocker-agg",
            "local",
            "workers",
            "(no",
            "supervisor",
            "here)",
            "2/2",
            "waiting",
            "2026-11-29T15:00:03.000+00:00",
        ],
    ]
    assert calls(slurm, "squeue") == [["--me", "--noheader", SQUEUE_FORMAT]]


def test_monitor_once_json_all(invoke: Invoke, base: Path, slurm: dict[str, Any]) -> None:
    build_job(base, "4100", events=FINISHED, run=HEALTHY, rollup=True)
    build_job(base, "local-20261129T140000Z", events=FINISHED, run=HEALTHY)
    (base / "not-a-job").mkdir()
    set_jobs(slurm, job_row("4242"))
    result = invoke("monitor", "--once", "--all", "--json", env=slurm)
    assert result.exit_code == 0, result.output
    docs = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(d["job_id"], d["ended"], d["benchmark"]) for d in docs] == [
        ("4242", False, "waiting"),
        ("4100", True, "finished"),
        ("local-20261129T140000Z", True, "finished"),
    ]
    assert docs[1]["slurm_note"] == "not in squeue --me"
    assert [r["concurrency"] for r in docs[1]["results"]] == [1, 2]


def test_monitor_without_squeue_shows_local_jobs(
    invoke: Invoke, base: Path, no_slurm: dict[str, str]
) -> None:
    build_job(base, "local-20261129T150000Z", events=RUNNING)
    result = invoke("monitor", "--once", env=no_slurm)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "  note: squeue is not on PATH (no Slurm state)"
    assert "local-20261129T150000Z" in result.stdout


def test_monitor_refreshes_until_interrupted(base: Path, no_slurm: dict[str, str]) -> None:
    """The live loop, in a real process: several screens, then Ctrl-C (SIGINT) exits 0."""
    build_job(base, "local-20261129T150000Z", events=RUNNING)
    env = {**os.environ, **no_slurm, "TERM": "dumb"}
    code = "from srt_cli.main import main; main()"
    child = subprocess.Popen(
        [sys.executable, "-c", code, "monitor", "--interval", "0.2"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    screens = 0
    try:
        for line in child.stdout:
            screens += line.startswith("srtctl monitor: ")
            if screens == 3:
                break
        child.send_signal(signal.SIGINT)
        # hang guard: 150x the 0.2 s interval; SIGINT ends the loop at its next bytecode
        _, err = child.communicate(timeout=30)
    finally:
        # a child that did not stop is killed here, not left running into the next test
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 0, err
    assert screens == 3
