"""Nothing of a local job is left running, and a local job only uses what is its own.

Real supervisors (``python -m srt_runtime run``), real processes, real sockets on 127.0.0.1:
SIGKILL of the supervisor leaves no process of the job (its watchdog kills every recorded group
and every process carrying the job's marker, also one that left its group with ``setsid``);
a port of the plan already in use refuses the job before anything starts, naming the holder;
a health gate answered by somebody else's server fails the job.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rt_plans import fake, free_port, plan, spec, write_routes

from srt_planner.plan import HealthGate, JobPlan
from srt_runtime.errors import LaunchError
from srt_runtime.plan_io import write_plan
from srt_runtime.ports import check_ports_free, find_listeners
from srt_runtime.watchdog import RECORD_NAME, read_record

PROC = Path("/proc")
RUNTIME = (sys.executable, "-m", "srt_runtime", "run")
PROC_PY = Path(__file__).parent / "fakes" / "proc.py"


def _stat(pid: int) -> list[str] | None:
    try:
        return (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def _start_time(pid: int) -> str | None:
    """The process's start time (clock ticks since boot): tells a pid from its reuse."""
    fields = _stat(pid)
    return fields[19] if fields is not None else None


def _still_running(pid: int, started: str | None) -> bool:
    """The same process (not a new one that got its pid) is alive and not exiting."""
    return _alive(pid) and _start_time(pid) == started


def _in_groups(pgids: set[int]) -> list[int]:
    """Live processes whose process group or session is one of ``pgids``."""
    found = []
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields and fields[0] != "Z" and {int(fields[2]), int(fields[3])} & pgids:
                found.append(int(entry.name))
    return found


def _marked(name: str, value: str) -> list[int]:
    needle = f"{name}={value}".encode()
    found = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0") and _alive(int(entry.name)):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _status(job_dir: Path) -> dict[str, Any]:
    try:
        doc = json.loads((job_dir / "status.json").read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return {}
    assert isinstance(doc, dict)
    return doc


def _wait(check: Any, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _supervise(job_plan: JobPlan, job_dir: Path) -> subprocess.Popen[str]:
    write_plan(job_plan, job_dir / "plan.json")
    return subprocess.Popen(
        [*RUNTIME, "--job-dir", str(job_dir), "--plan", str(job_dir / "plan.json")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.fixture
def supervisors() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for child in started:
        if child.poll() is None:
            child.kill()
        child.communicate(timeout=30)


def test_sigkill_of_the_supervisor_leaves_nothing_running(
    job_dir: Path, no_leftover_processes: str, supervisors: list[subprocess.Popen[str]]
) -> None:
    job_plan = plan(
        spec("agg_0", fake("child", "forever"), role="agg"),  # a grandchild in its group
        spec(
            "escapee",
            ("bash", "-c", "setsid sleep 600 & sleep 600"),  # one process leaves the group
            kind="service",
            phase="before_workers",
        ),
        serve_only=True,
    )
    child = _supervise(job_plan, job_dir)
    supervisors.append(child)
    _wait(lambda: _status(job_dir).get("stage") == "serving", "stage serving")
    record = read_record(job_dir / "logs" / RECORD_NAME)
    assert sorted(str(e["name"]) for e in record) == ["agg_0", "escapee"]
    pgids = {int(str(e["pgid"])) for e in record}
    # A real job: the leaders, their children and the process that called setsid (3 + 1 + 2).
    _wait(lambda: len(_in_groups(pgids)) >= 4, "the grandchildren")
    marked = _marked("SRT_RUNTIME_TEST_MARKER", no_leftover_processes)
    escaped = [p for p in marked if p not in _in_groups(pgids) and p != child.pid]
    assert escaped, "the setsid process is not running, so the test proves nothing"
    assert _status(job_dir)["pid"] == child.pid
    started = {p: _start_time(p) for p in escaped}

    os.kill(child.pid, signal.SIGKILL)
    killed = time.monotonic()
    child.communicate(timeout=30)
    _wait(lambda: not _in_groups(pgids), "the job's process groups to die", timeout=5.0)
    _wait(
        lambda: not _marked("SRT_RUNTIME_TEST_MARKER", no_leftover_processes),
        "every process of the job (and the watchdog) to end",
        timeout=5.0 - (time.monotonic() - killed),
    )
    # A killed process may still be exiting for a moment after its environment is gone.
    _wait(
        lambda: not any(_still_running(p, t) for p, t in started.items()),
        "the process that left its group to end",
        timeout=max(0.1, 5.0 - (time.monotonic() - killed)),
    )
    # The supervisor had no chance to write a final status: it still says running, with its
    # pid, which is how `srtctl status` tells that the job is dead.
    status = _status(job_dir)
    assert (status["stage"], status["status"], status["pid"]) == ("serving", "running", child.pid)


def test_a_normal_end_leaves_the_watchdog_nothing_to_do(
    job_dir: Path, no_leftover_processes: str, supervisors: list[subprocess.Popen[str]]
) -> None:
    job_plan = plan(
        spec("svc", fake("child", "forever"), kind="service", phase="before_workers"),
        spec("benchmark", fake("exit", 0), kind="benchmark", phase="benchmark"),
    )
    child = _supervise(job_plan, job_dir)
    supervisors.append(child)
    output, _ = child.communicate(timeout=60)
    assert child.returncode == 0, output
    assert "watchdog" not in output  # it found nothing left to kill
    assert _status(job_dir)["status"] == "completed"
    _wait(
        lambda: not _marked("SRT_RUNTIME_TEST_MARKER", no_leftover_processes),
        "the watchdog to exit",
        timeout=5.0,
    )


def test_a_busy_port_refuses_the_job_before_anything_starts(
    job_dir: Path, supervisors: list[subprocess.Popen[str]]
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as holder:
        port = int(holder.getsockname()[1])
        job_plan = plan(
            spec("setup", fake("exit", 0), kind="service", phase="host_setup"),
            spec(
                "frontend_0",
                fake("forever"),
                kind="frontend",
                phase="frontends",
                ports={"http": port},
            ),
            serve_only=True,
        )
        child = _supervise(job_plan, job_dir)
        supervisors.append(child)
        output, _ = child.communicate(timeout=60)
    argv = " ".join(
        part.decode() for part in (PROC / str(os.getpid()) / "cmdline").read_bytes().split(b"\0")
    )
    assert child.returncode == 1, output
    status = _status(job_dir)
    assert (status["stage"], status["status"], status["exit_code"]) == ("cleanup", "failed", 1)
    assert status["message"].startswith(
        f"port {port} (frontend_0 http) is held by pid {os.getpid()} (`"
    ), status["message"]
    assert status["message"].endswith(
        "`): the plan's ports must be free on this host before a local job starts; stop the job "
        "or program holding them (srtctl cancel <job_id> for another local job) and apply again"
    )
    assert argv.split()[0] in status["message"]
    # The failure catalog names the cause (a provoked failure: issue 33).
    diagnosis = json.loads((job_dir / "logs" / "diagnosis.json").read_text())
    assert diagnosis["cause"] == "port_in_use", diagnosis
    # Refused before the first process (host_setup's) started.
    assert not (job_dir / "logs" / "setup.out").exists()
    assert not (job_dir / "logs" / RECORD_NAME).exists()


def test_the_health_gate_refuses_another_jobs_frontend(
    tmp_path: Path, job_dir: Path, supervisors: list[subprocess.Popen[str]]
) -> None:
    port = free_port()
    ready = {"instances": [{"component": "backend", "endpoint": "generate"}]}
    routes = write_routes(
        tmp_path / "routes.json",
        {"/health": [200, ready], "/v1/models": [200, {"data": [{"id": "test-model"}]}]},
    )
    # Somebody else's frontend on the port the plan's gate asks.
    other = subprocess.Popen(
        [sys.executable, str(PROC_PY), "http", str(port), str(routes), "forever"]
    )
    try:
        _wait(lambda: bool(find_listeners([port])), "the other frontend")
        url = f"http://127.0.0.1:{port}/health"
        job_plan = plan(
            spec("frontend_0", fake("forever"), kind="frontend", phase="frontends"),
            spec("benchmark", fake("exit", 0), kind="benchmark", phase="benchmark"),
            health=HealthGate(
                family="dynamo", url=url, expected_decode=1, max_attempts=20, interval_seconds=0.5
            ),
        )
        child = _supervise(job_plan, job_dir)
        supervisors.append(child)
        output, _ = child.communicate(timeout=60)
    finally:
        other.kill()
        other.wait()
    assert child.returncode == 1, output
    status = _status(job_dir)
    assert (status["status"], status["exit_code"]) == ("failed", 1)
    assert status["message"].startswith(
        f"the health gate {url} answered, but port {port} is held by pid {other.pid} (`"
    ), status["message"]
    assert status["message"].endswith(
        "`), not by a process of this job: the gate talked to another job or program; stop it "
        "(srtctl cancel <job_id> for another local job) and apply again"
    )
    assert not (job_dir / "logs" / "benchmark.out").exists()


def test_the_health_gate_accepts_the_jobs_own_frontend(
    tmp_path: Path, job_dir: Path, supervisors: list[subprocess.Popen[str]]
) -> None:
    port = free_port()
    ready = {"instances": [{"component": "backend", "endpoint": "generate"}]}
    routes = write_routes(
        tmp_path / "routes.json",
        {"/health": [200, ready], "/v1/models": [200, {"data": [{"id": "test-model"}]}]},
    )
    job_plan = plan(
        spec(
            "frontend_0",
            fake("http", port, routes, "forever"),
            kind="frontend",
            phase="frontends",
            ports={"http": port},
        ),
        spec("benchmark", fake("exit", 0), kind="benchmark", phase="benchmark"),
        health=HealthGate(
            family="dynamo",
            url=f"http://127.0.0.1:{port}/health",
            expected_decode=1,
            max_attempts=40,
            interval_seconds=0.5,
        ),
    )
    child = _supervise(job_plan, job_dir)
    supervisors.append(child)
    output, _ = child.communicate(timeout=60)
    assert child.returncode == 0, output
    assert _status(job_dir)["status"] == "completed"


def _fake_proc(root: Path, port: int, *, holder: int | None) -> Path:
    """A /proc with one listening socket (inode 4711) on ``port`` and, if given, its holder."""
    (root / "net").mkdir(parents=True)
    header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
    header += "timeout inode\n"
    row = f"   0: 0100007F:{port:04X} 00000000:0000 0A 00000000:00000000 00:00000000 00000000"
    row += "  1000        0 4711 1 0000000000000000 100 0 0 10 0\n"
    closed = f"   1: 0100007F:{port + 1:04X} 0100007F:9C40 06 00000000:00000000 00:00000000 "
    closed += "00000000  1000        0 4712 1\n"
    (root / "net" / "tcp").write_text(header + row + closed)
    (root / "net" / "tcp6").write_text(header)
    if holder is not None:
        (root / str(holder) / "fd").mkdir(parents=True)
        (root / str(holder) / "fd" / "3").symlink_to("socket:[4711]")
        (root / str(holder) / "cmdline").write_bytes(b"etcd\0--data-dir\0/tmp/x\0")
    return root


def test_a_port_holder_is_named_from_proc_or_is_another_process(tmp_path: Path) -> None:
    claim = (spec("service_etcd", ("etcd",), kind="service", ports={"client": 2379, "peer": 2380}),)
    with pytest.raises(LaunchError) as named:
        check_ports_free(claim, _fake_proc(tmp_path / "a", 2379, holder=321))
    assert str(named.value).startswith(
        "port 2379 (service_etcd client) is held by pid 321 (`etcd --data-dir /tmp/x`): "
    )
    with pytest.raises(LaunchError) as unknown:
        check_ports_free(claim, _fake_proc(tmp_path / "b", 2379, holder=None))
    assert str(unknown.value).startswith(
        "port 2379 (service_etcd client) is held by another process (not one of this user's): "
    )
    # 2380 only has a closed (TIME_WAIT) socket in the table: free.
    check_ports_free(
        (spec("x", ("x",), ports={"peer": 2380}),), _fake_proc(tmp_path / "d", 2379, holder=None)
    )
