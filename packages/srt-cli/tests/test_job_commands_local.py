"""Job commands against real processes: cancelling a real local run (``srtctl apply --local`` and
the real runtime), and ``logs --follow`` on a log that another process writes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_testkit import DATA, Invoke

from srt_runtime import FileStatusSink, SystemClock

SRTCTL = [sys.executable, "-c", "from srt_cli.main import main; main()"]
JOB = "local-20261129T150000Z"


def _children(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (from /proc/<n>/stat, field 4)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def _wait_for(check: object, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _status(job_dir: Path) -> dict[str, object]:
    try:
        doc = json.loads((job_dir / "status.json").read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return {}
    assert isinstance(doc, dict)
    return doc


@pytest.fixture
def local_run(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """``srtctl apply --local`` of a job whose terminal service sleeps, in the background, until
    its status says it is serving; the job folder is ./outputs/local-<timestamp>/."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for tool in ("bash", "sleep"):
        (folder / tool).symlink_to(f"/bin/{tool}")
    recipe = tmp_path / "sleepy.yaml"
    text = (DATA / "hello-service.yaml").read_text()
    recipe.write_text(text.replace("echo hello from srt", "sleep 120"))
    child = subprocess.Popen(
        [*SRTCTL, "apply", "-f", str(recipe), "--local", "--json"],
        env={**os.environ, "PATH": str(folder)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    outputs = Path.cwd() / "outputs"
    try:
        _wait_for(lambda: outputs.is_dir() and any(outputs.iterdir()), "the job folder")
        (job_dir,) = outputs.iterdir()
        _wait_for(lambda: _status(job_dir).get("stage") == "serving", "stage serving")
        yield child, job_dir
    finally:
        if child.poll() is None:
            for pid in _children(child.pid):
                os.kill(pid, signal.SIGKILL)
            child.kill()
        child.communicate(timeout=60)


def _assert_cancelled_by_sigterm(child: subprocess.Popen[str], job_dir: Path) -> str:
    """The run ended because its supervisor got SIGTERM; returns its final status value."""
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 4, stderr
    final = _status(job_dir)
    assert (final["stage"], final["exit_code"]) == ("cleanup", 1)
    # The runtime is moving signalled stops from "failed" to their own value, "cancelled".
    assert final["status"] in ("failed", "cancelled")
    assert final["message"] == "stopped: received SIGTERM during stage serving"
    sweep = (job_dir / "logs" / f"sweep_{job_dir.name}.log").read_text()
    assert "WARNING Received SIGTERM, initiating cleanup..." in sweep
    return str(final["status"])


def test_cancel_a_real_local_run(
    invoke: Invoke, local_run: tuple[subprocess.Popen[str], Path]
) -> None:
    child, job_dir = local_run
    (supervisor,) = _children(child.pid)
    running = json.loads(invoke("status", job_dir.name, "--json").stdout)
    assert (running["stage"], running["ended"], running["kind"]) == ("serving", False, "local")
    assert running["supervisor"] == [supervisor]
    result = invoke("cancel", job_dir.name, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "job_id": job_dir.name,
        "kind": "local",
        "cancelled": True,
        "how": f"SIGTERM to pid {supervisor}",
        "message": f"sent SIGTERM to the supervisor of {job_dir.name} (pid {supervisor}); it "
        "stops every process of the job and writes the final status",
    }
    final = _assert_cancelled_by_sigterm(child, job_dir)
    after = invoke("cancel", job_dir.name)
    assert after.exit_code == 0
    assert after.stdout == (
        f"job {job_dir.name} has already ended ({final}, exit code 1); nothing to cancel\n"
    )
    ended = json.loads(invoke("status", job_dir.name, "--json").stdout)
    assert (ended["ended"], ended["supervisor"]) == (True, None)


def test_cancel_uses_a_pid_recorded_in_status_json(
    invoke: Invoke, local_run: tuple[subprocess.Popen[str], Path]
) -> None:
    """The runtime does not record its pid yet; when it does (``pid`` in status.json), cancel
    signals that pid after checking it is this job's supervisor."""
    child, job_dir = local_run
    (supervisor,) = _children(child.pid)
    doc = _status(job_dir)
    (job_dir / "status.json").write_text(json.dumps({**doc, "pid": supervisor}))
    result = invoke("cancel", job_dir.name)
    assert result.exit_code == 0, result.output
    assert f"(pid {supervisor})" in result.stdout
    _assert_cancelled_by_sigterm(child, job_dir)


def _write_running_status(job_dir: Path, **extra: object) -> None:
    FileStatusSink(job_dir, job_dir.name, SystemClock()).emit("workers", "running")
    if extra:
        doc = json.loads((job_dir / "status.json").read_text())
        (job_dir / "status.json").write_text(json.dumps({**doc, **extra}))


def test_cancel_refuses_a_recorded_pid_that_is_not_the_supervisor(invoke: Invoke) -> None:
    job_dir = Path.cwd() / "outputs" / JOB
    job_dir.mkdir(parents=True)
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        _write_running_status(job_dir, pid=bystander.pid)
        result = invoke("cancel", JOB)
        assert result.exit_code == 4
        assert result.stderr == (
            f"error: {job_dir / 'status.json'} records supervisor pid {bystander.pid}, but pid "
            f"{bystander.pid} is not `srt_runtime run --job-dir {job_dir}` of this user (it "
            f"runs `sleep 60`); not signalling it\n"
        )
        time.sleep(0.2)
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()


def test_cancel_a_local_job_with_no_supervisor_here(invoke: Invoke) -> None:
    job_dir = Path.cwd() / "outputs" / JOB
    job_dir.mkdir(parents=True)
    _write_running_status(job_dir)
    result = invoke("cancel", JOB)
    assert result.exit_code == 4
    assert result.stderr == (
        f"error: no supervisor of local job {JOB} runs on this machine (looked for `python -m "
        f"srt_runtime run --job-dir {job_dir}` in /proc); if it runs on another machine, cancel "
        "it there\n"
    )
    missing = invoke("cancel", "local-20261129T150001Z")
    assert missing.exit_code == 2


WRITER = """
import sys, time
from pathlib import Path
from srt_runtime import FileStatusSink, SystemClock
job_dir = Path(sys.argv[1])
log = job_dir / "logs" / "benchmark.out"
time.sleep(0.5)
with log.open("a") as out:
    out.write("line\\n")
    for i in range(1, 6):
        out.write(f"request batch {i}\\n")
        out.flush()
        time.sleep(0.3)
    out.write("tail without newline")
FileStatusSink(job_dir, job_dir.name, SystemClock()).emit("cleanup", "completed", "", 0)
"""


def test_logs_follow_prints_a_growing_log_until_the_job_ends() -> None:
    job_dir = Path.cwd() / "outputs" / JOB
    (job_dir / "logs").mkdir(parents=True)
    FileStatusSink(job_dir, JOB, SystemClock()).emit("benchmark", "running")
    (job_dir / "logs" / "benchmark.out").write_text("before follow\nhalf a ")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(job_dir)])
    errors = job_dir.parent / "follow.err"
    with errors.open("w") as err:
        follow = subprocess.Popen(
            [*SRTCTL, "logs", JOB, "--process", "benchmark.out", "--follow"],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
    # A hung follow is killed, so the reads below end and the test fails instead of hanging.
    guard = threading.Timer(60, follow.kill)
    guard.start()
    try:
        assert follow.stdout is not None
        first = [follow.stdout.readline() for _ in range(3)]
        # "request batch 1" arrives while the writer is still writing: the log is followed, not
        # read once at the end.
        writing = writer.poll() is None
        rest = follow.stdout.read()
        follow.wait(timeout=60)
    finally:
        guard.cancel()
        writer.wait(timeout=60)
        if follow.poll() is None:
            follow.kill()
            follow.wait()
        assert follow.stdout is not None
        follow.stdout.close()
    stderr = errors.read_text()
    assert follow.returncode == 0, stderr
    assert writing
    assert first == ["before follow\n", "half a line\n", "request batch 1\n"]
    assert rest == "".join(
        [*(f"request batch {i}\n" for i in range(2, 6)), "tail without newline\n"]
    )
