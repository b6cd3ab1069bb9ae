"""``srtctl wait``: the documented exit codes for real local jobs (completed, failed, invalid,
cancelled), and the wait loop's timeout, unknown jobs and Slurm states on an injected clock."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml
from cli_testkit import Invoke
from local_jobs import ROOT, SRTCTL, job_status, wait_for

from srt_cli.waiting import EXIT_CODES, Observation, Outcome, classify, wait_for_jobs


def _apply(invoke: Invoke, recipe: Path, env: dict[str, str]) -> str:
    result = invoke("apply", "-f", str(recipe), "--local", "--json", env=env)
    (record,) = [json.loads(line) for line in result.stdout.splitlines()]
    return str(record["job_id"])


def test_wait_on_a_completed_local_job_exits_0(
    invoke: Invoke, data: Path, no_slurm_path: dict[str, str]
) -> None:
    job = _apply(invoke, data / "hello-service.yaml", no_slurm_path)
    result = invoke("wait", job, "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert (doc["job_id"], doc["outcome"], doc["exit"]) == (job, "completed", 0)
    assert doc["detail"] == "completed (no benchmark planned)"
    assert invoke("wait", job).stdout == f"{job}: completed (completed (no benchmark planned))\n"


def test_wait_on_a_failed_local_job_exits_12(
    invoke: Invoke, data: Path, no_slurm_path: dict[str, str]
) -> None:
    recipe = data / "hello-service.yaml"
    recipe.write_text(recipe.read_text().replace("echo hello from srt", "exit 7"))
    job = _apply(invoke, recipe, no_slurm_path)
    result = invoke("wait", job, "--json")
    assert result.exit_code == EXIT_CODES["failed"] == 12, result.output
    doc = json.loads(result.stdout.splitlines()[0])
    assert (doc["outcome"], doc["job_exit_code"]) == ("failed", 7)


def test_wait_blocks_until_a_local_job_is_cancelled_and_exits_11(
    tmp_path: Path, data: Path
) -> None:
    folder = tmp_path / "bin"
    folder.mkdir()
    for tool in ("bash", "sleep"):
        (folder / tool).symlink_to(f"/bin/{tool}")
    recipe = data / "hello-service.yaml"
    recipe.write_text(recipe.read_text().replace("echo hello from srt", "sleep 120"))
    env = {**os.environ, "PATH": str(folder)}
    apply = subprocess.Popen(
        [*SRTCTL, "apply", "-f", str(recipe), "--local"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    outputs = Path.cwd() / "outputs"
    waiter = None
    try:
        wait_for(lambda: outputs.is_dir() and any(outputs.iterdir()), "job folder", 60, apply)
        (job_dir,) = outputs.iterdir()
        wait_for(lambda: job_status(job_dir).get("stage") == "serving", "serving", 60, apply)
        waiter = subprocess.Popen(
            [*SRTCTL, "wait", job_dir.name, "--interval", "0.2"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert waiter.poll() is None  # the job serves until cancelled: wait is still blocking
        cancel = subprocess.run(
            [*SRTCTL, "cancel", job_dir.name], env=env, capture_output=True, text=True, check=False
        )
        assert cancel.returncode == 0, cancel.stderr
        out, err = waiter.communicate(timeout=120)  # hang guard
        assert waiter.returncode == EXIT_CODES["cancelled"] == 11, (out, err)
        assert out.startswith(f"{job_dir.name}: cancelled (exit 1: stopped: received SIGTERM")
    finally:
        for child in (apply, waiter):
            if child is not None and child.poll() is None:
                child.kill()
            if child is not None:
                child.communicate(timeout=60)  # hang guard


@pytest.mark.slow
def test_wait_on_an_invalid_local_job_exits_10(tmp_path: Path, invoke: Invoke) -> None:
    """The quickstart (Dynamo frontend, mocker workers, sa-bench) with one request per stream:
    the window is one request long, shorter than 3 x its median latency (window_too_short)."""
    doc = yaml.safe_load((ROOT / "examples" / "quickstart.yaml").read_text())
    doc["model"]["path"] = str(ROOT / "examples" / "models" / "tiny-word")
    doc["benchmark"].update({"concurrencies": [2], "num_prompts_mult": 1})
    recipe = tmp_path / "invalid.yaml"
    recipe.write_text(yaml.safe_dump(doc, sort_keys=False))
    job = _apply(invoke, recipe, {})
    result = invoke("wait", job, "--json")
    assert result.exit_code == EXIT_CODES["invalid"] == 10, result.output
    outcome = json.loads(result.stdout)
    assert outcome["outcome"] == "invalid"
    assert "window_too_short" in outcome["detail"], outcome


# -- the loop and the decision, on an injected clock ------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _running(job_id: str) -> Observation:
    return Observation(job_id=job_id, exists=True, status="running", supervisor_alive=True)


def test_jobs_still_running_at_the_timeout_are_timed_out() -> None:
    clock = FakeClock()
    looks: list[float] = []

    def look(job_id: str) -> Observation:
        looks.append(clock.now)
        if job_id == "b" and clock.now >= 4:
            return Observation(job_id="b", exists=True, status="completed", final=True,
                               exit_code=0, rollup=(True, ()))  # fmt: skip
        return _running(job_id)

    seen: list[Outcome] = []
    outcomes = wait_for_jobs(
        ["a", "b"], look, timeout=10, interval=2, clock=clock, sleep=clock.sleep, report=seen.append
    )
    assert [o.kind for o in outcomes] == ["timed_out", "completed"]
    assert [o.job_id for o in seen] == ["b", "a"]  # reported as they end
    assert clock.now == 10
    assert max(EXIT_CODES[o.kind] for o in outcomes) == 13


def test_an_unknown_job_and_slurm_states() -> None:
    unknown = classify(Observation(job_id="9", exists=False), waited=0)
    assert unknown is not None and unknown.kind == "unknown"
    pending = Observation(job_id="9", exists=True, slurm_state="PENDING")
    assert classify(pending, waited=0) is None
    gone = Observation(job_id="9", exists=True, slurm_state="CANCELLED by 1000")
    assert (classify(gone, waited=0) or Outcome("", "completed", "")).kind == "cancelled"
    node_fail = Observation(job_id="9", exists=True, slurm_state="NODE_FAIL")
    assert (classify(node_fail, waited=0) or Outcome("", "completed", "")).kind == "failed"
    # an empty queue is not success: Slurm says COMPLETED but the runtime wrote no final status
    empty = Observation(job_id="9", exists=True, slurm_state="COMPLETED")
    assert (classify(empty, waited=0) or Outcome("", "completed", "")).kind == "failed"


def test_a_local_folder_that_never_starts_fails_after_the_grace() -> None:
    never = Observation(job_id="local-x", exists=True, supervisor_alive=False)
    assert classify(never, waited=5) is None
    late = classify(never, waited=31)
    assert late is not None and late.kind == "failed"


def test_an_unknown_job_id_exits_14(invoke: Invoke) -> None:
    result = invoke("wait", "local-20200101T000000Z", "-o", "nowhere")
    assert result.exit_code == 14
    assert result.stdout.startswith("local-20200101T000000Z: unknown (no job folder")
