"""Armed host teardown: under Slurm each teardown step starts with the run and waits for SIGTERM
(Slurm refuses new steps once a job is cancelled), then runs its command once."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from rt_plans import fake, spec

from srt_runtime.teardown import ARMED_SCRIPT, armed_spec


def _teardown(**fields: object):
    return spec(
        "host_teardown_node1", fake("exit", 0), kind="service", phase="host_setup", **fields
    )


def test_armed_spec_puts_the_waiter_right_before_the_task_of_the_srun_line() -> None:
    srun = (
        "srun", "--jobid", "7", "--overlap", "--nodelist", "node1",
        "--job-name=host_teardown_node1", "--export=ALL,A=1",
        "bash", "-c", "touch /x",
    )  # fmt: skip
    armed = armed_spec(_teardown(srun_argv=srun))
    assert armed is not None
    assert armed.srun_argv == (
        *srun[:8], "bash", "-c", ARMED_SCRIPT, "srt-teardown", "bash", "-c", "touch /x",
    )  # fmt: skip
    assert armed.name == "host_teardown_node1"


def test_armed_spec_without_an_srun_line_wraps_the_argv() -> None:
    plain = _teardown()
    armed = armed_spec(plain)
    assert armed is not None
    assert armed.argv == ("bash", "-c", ARMED_SCRIPT, "srt-teardown", *plain.argv)


def test_an_srun_line_without_a_task_is_not_armed() -> None:
    assert armed_spec(_teardown(srun_argv=("srun", "--job-name=x"))) is None


def test_the_armed_task_waits_for_sigterm_then_runs_once(tmp_path: Path) -> None:
    out = tmp_path / "ran"
    task = ["sh", "-c", f'echo ran >> "{out}"; sleep 0.3; exit 3']
    proc = subprocess.Popen(["bash", "-c", ARMED_SCRIPT, "srt-teardown", *task])
    try:
        time.sleep(0.5)
        assert proc.poll() is None
        assert not out.exists()
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)  # Slurm and the supervisor may both signal
        assert proc.wait(10) == 3
    finally:
        proc.kill()
        proc.wait()
    assert out.read_text() == "ran\n"
