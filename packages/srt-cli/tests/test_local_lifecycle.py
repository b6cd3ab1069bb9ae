"""A local job leaves nothing running, whatever ends it: real ``srtctl apply --local`` runs of the
quickstart as a manual (serve-only) recipe, the real Dynamo frontend and mocker workers.

- SIGTERM to ``srtctl apply --local``: the runtime stops the job through its tiered cleanup, and
  apply returns only after it (status ``cancelled``, no process left, every port free).
- A second local job while the first runs is refused by ``apply`` before it creates anything
  (exit 4, no job folder), naming the port and the first job's process holding it.
- SIGKILL of the first job's supervisor: within 5 s nothing of the job runs, and ``srtctl status``
  says the job is dead (its supervisor gone) instead of ``running`` for ever.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from cli_testkit import Invoke
from local_jobs import MARKER, SRTCTL
from local_jobs import job_status as _status
from local_jobs import marked as _marked
from local_jobs import wait_for as _wait_for

from srt_runtime import FileStatusSink, SystemClock
from srt_runtime.ports import find_listeners
from srt_runtime.watchdog import RECORD_NAME, read_record


class Apply:
    """``srtctl apply --local`` of a recipe in the background, into ``out``."""

    def __init__(self, recipe: Path, out: Path, marker: str) -> None:
        self.out = out
        self.child = subprocess.Popen(
            [*SRTCTL, "apply", "--local", "-f", str(recipe), "-o", str(out)],
            env={**os.environ, MARKER: marker},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def serving(self) -> Path:
        """Wait until the job serves (after its health gate); its job folder."""
        out, child = self.out, self.child
        _wait_for(lambda: out.is_dir() and any(out.iterdir()), "the job folder", 60, child)
        (job_dir,) = [p for p in out.iterdir() if p.is_dir()]
        _wait_for(lambda: _status(job_dir).get("stage") == "serving", "stage serving", 240, child)
        return job_dir

    def stop(self) -> None:
        if self.child.poll() is None:
            self.child.kill()
        self.child.communicate(timeout=60)


def _plan_ports(job_dir: Path) -> set[int]:
    plan = json.loads((job_dir / "plan.json").read_text())
    return {port for proc in plan["processes"] for port in proc.get("ports", {}).values()}


def _listening(ports: set[int]) -> set[int]:
    return {listener.port for listener in find_listeners(ports)}


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_sigterm_to_apply_local_stops_the_job_before_it_returns(
    manual_recipe: Path, marker: str, tmp_path: Path, sig: signal.Signals
) -> None:
    run = Apply(manual_recipe, tmp_path / "out", marker)
    try:
        job_dir = run.serving()
        ports = _plan_ports(job_dir)
        assert {7500, 8000} <= _listening(ports)  # a worker and the frontend hold their ports
        supervisor = _status(job_dir)["pid"]

        os.kill(run.child.pid, sig)
        output, _ = run.child.communicate(timeout=120)

        # Nothing is left the moment apply returns: no process, no port, no supervisor.
        assert _marked(marker) == [], "processes of the job left running"
        assert _listening(ports) == set()
        assert (
            not Path(f"/proc/{supervisor}").exists()
            or "Z" in (Path(f"/proc/{supervisor}/stat").read_text().rsplit(")", 1)[1].split()[0])
        )
        final = _status(job_dir)
        assert (final["stage"], final["status"], final["exit_code"]) == ("cleanup", "cancelled", 1)
        assert final["message"] == f"stopped: received {sig.name} during stage serving"
        assert f"Received {sig.name}, initiating cleanup..." in output
        assert f"job {job_dir.name} failed with exit code 1: {job_dir}" in output
        assert run.child.returncode != 0
    finally:
        run.stop()


@pytest.mark.slow
def test_a_second_job_is_refused_and_a_killed_supervisor_leaves_nothing(
    invoke: Invoke, manual_recipe: Path, marker: str, tmp_path: Path
) -> None:
    first = Apply(manual_recipe, tmp_path / "first", marker)
    try:
        job_dir = first.serving()
        job_id = job_dir.name
        record = read_record(job_dir / "logs" / RECORD_NAME)
        worker = next(int(str(e["pid"])) for e in record if e["name"] == "agg_0_node-01")
        ports = _plan_ports(job_dir)

        second = subprocess.run(
            [*SRTCTL, "apply", "--local", "-f", str(manual_recipe), "-o", str(tmp_path / "second")],
            env={**os.environ, MARKER: marker},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        # Refused by apply itself, before anything is created (issue 32 item 7): exit 4, no job
        # folder, the lowest busy port first (the first worker's system port), then the others.
        assert second.returncode == 4, second.stdout[-3000:] + second.stderr[-3000:]
        assert not (tmp_path / "second").exists() or not any((tmp_path / "second").iterdir())
        message = second.stderr
        assert f"port 7500 (agg_0_node-01 sys) is held by pid {worker} (`" in message, message
        assert "; port 7501 (agg_1_node-01 sys) is held by pid " in message
        assert "the plan's ports must be free on this host before a local job starts" in message
        # ... and the first job still serves.
        assert (_status(job_dir)["stage"], first.child.poll()) == ("serving", None)

        supervisor = _status(job_dir)["pid"]
        os.kill(supervisor, signal.SIGKILL)
        killed = time.monotonic()
        first.child.communicate(timeout=60)
        # A SIGKILLed process leaves /proc's environ (its memory goes first) a moment before its
        # sockets close: wait for both, within the one 5 s bound.
        while (_marked(marker) or _listening(ports)) and time.monotonic() - killed < 5.0:
            time.sleep(0.05)
        assert _marked(marker) == [], "processes of the job outlived its supervisor by 5 s"
        assert _listening(ports) == set(), "ports of the job outlived its supervisor by 5 s"

        summary = json.loads(
            invoke("status", job_id, "-o", str(tmp_path / "first"), "--json").stdout
        )
        assert (summary["stage"], summary["status"], summary["ended"]) == ("serving", "dead", True)
        assert summary["message"] == (
            f"supervisor {supervisor} gone: the job ended during stage serving without a final "
            "status (its supervisor was killed); its watchdog kills what the job started "
            "(logs/local_processes.jsonl)"
        )
        text = invoke("status", job_id, "-o", str(tmp_path / "first")).stdout
        assert f"  stage:      serving (dead) at {summary['updated_at']}: supervisor " in text
    finally:
        first.stop()


def test_status_tells_a_dead_supervisor_from_a_live_one(invoke: Invoke) -> None:
    """status.json says running: with a recorded pid that is gone, or is not this job's
    supervisor (a recycled pid), the job is dead; without a pid (an older runtime) it is not."""
    job = "local-20261129T150000Z"
    job_dir = Path.cwd() / "outputs" / job
    job_dir.mkdir(parents=True)
    gone = subprocess.Popen(["true"])
    gone.wait()
    for pid, expected in ((gone.pid, "dead"), (os.getpid(), "dead"), (None, "running")):
        FileStatusSink(job_dir, job, SystemClock(), pid=pid).emit("workers", "running")
        summary = json.loads(invoke("status", job, "--json").stdout)
        assert (summary["status"], summary["ended"]) == (expected, expected == "dead"), pid
        if expected == "dead":
            assert summary["message"].startswith(
                f"supervisor {pid} gone: the job ended during stage workers without a final "
            )
            assert "  stage:      workers (dead) at " in invoke("status", job).stdout
