"""``slurm.time_limit`` on a local run (docs/planner.md#time-limit): the supervisor stops the job
at the limit as Slurm would, with the tiered cleanup of a cancel, and the final status says
``timeout``. A serving job (``benchmark.type: manual``) would otherwise serve forever, so the
only way it ends by itself is the limit; the test waits for that with a hang guard."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "tests" / "recipes" / "sglang-agg-sglang-router.yaml"

pytestmark = pytest.mark.slow


def test_a_serving_job_ends_at_its_time_limit_with_status_timeout(tmp_path: Path) -> None:
    srtctl = shutil.which("srtctl")
    assert srtctl is not None, "srtctl is not installed in this environment (make sync)"
    argv = [srtctl, "apply", "--local", "--stand-in-engines", "-f", str(RECIPE)]
    argv += ["-o", str(tmp_path), "--set", "benchmark.type=manual"]
    argv += ["--unset", "benchmark.isl", "--unset", "benchmark.osl"]
    argv += ["--unset", "benchmark.concurrencies"]
    # MM:SS: a five-second limit, counted from the start of the run
    argv += ["--set", 'slurm.time_limit="00:05"', "--set", "health_check.interval_seconds=1"]
    # hang guard: a job that ignored its limit would serve until this timeout
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output[-3000:]
    [job_dir] = [p for p in tmp_path.iterdir() if p.is_dir() and p.name.startswith("local-")]
    status = json.loads((job_dir / "status.json").read_text())
    assert (status["status"], status["exit_code"]) == ("timeout", 1), status
    assert status["message"].startswith("stopped: time limit 00:05 reached during stage ")
    plan = json.loads((job_dir / "plan.json").read_text())
    assert (plan["time_limit"], plan["time_limit_seconds"]) == ("00:05", 5)
    # whatever stage the limit came in (serving, or still starting on a slow host), every
    # process the run started was stopped
    events = [
        json.loads(line) for line in (job_dir / "status_events.jsonl").read_text().splitlines()
    ]
    exited = {e["name"] for e in events if e.get("event") == "process" and e["what"] == "exited"}
    started = {e["name"] for e in events if e.get("event") == "process" and e["what"] == "started"}
    assert started and started <= exited
    lock = (job_dir / "recipe.lock.yaml").read_text()
    assert "status: timeout" in lock
    sweep = next((job_dir / "logs").glob("*sweep*.log")).read_text()
    assert "Time limit 00:05: the run stops there, as Slurm would" in sweep
    assert "Time limit 00:05 reached, initiating cleanup" in sweep
