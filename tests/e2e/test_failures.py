"""Scenarios 4 and 5: a worker killed with SIGKILL in the middle of the benchmark is relaunched
under ``restart: on-failure``, and fails the job at once when it is critical and may not restart."""

from __future__ import annotations

import json
import time

import yaml
from e2e_jobs import RECIPES

MEASURING = "measured requests"  # sa-bench's line when a concurrency's measured phase starts


def wait_until_benchmarking(srt, job) -> None:
    srt.wait_for_line(job.job_dir / "logs" / "benchmark.out", MEASURING, timeout=60)


def test_a_killed_critical_worker_fails_the_job_at_once_and_leaves_nothing(srt) -> None:
    job = srt.apply_one(RECIPES / "agg-long.yaml")
    wait_until_benchmarking(srt, job)
    name = "agg_0_node1"
    plan = json.loads((job.job_dir / "plan.json").read_text())
    (spec,) = [p for p in plan["processes"] if p["name"] == name]
    assert spec["critical"]
    victim = srt.find_step_task(job, name)
    killed_at = time.monotonic()
    srt.kill(victim)

    status = srt.wait(job, timeout=30)
    took = time.monotonic() - killed_at
    assert (status["status"], status["exit_code"]) == ("failed", 1)
    # hang guard: half the 30 s wait; a job that waited out its benchmark would take minutes
    assert took < 15, f"the job took {took:.1f} s to end after the kill"
    assert name in status["message"]
    sweep = srt.sweep_log(job)
    diagnosis = sweep[sweep.rindex("RUN FAILED") :]
    assert f"what:   {name}" in diagnosis
    assert "node:   node1" in diagnosis
    assert "exit:   exit code 137" in diagnosis  # srun: 128 + SIGKILL
    assert not srt.in_queue(job.job_id)
    assert srt.processes(job) == []
    assert not (job.job_dir / "logs" / "benchmark-rollup.json").exists()


def test_a_worker_killed_during_the_benchmark_is_relaunched(srt) -> None:
    restart = ("policy=on-failure", "max_restarts=2", "backoff_seconds=1")
    sets = [arg for item in restart for arg in ("--set", f"roles.agg.restart.{item}")]
    # The requests in flight on the killed worker fail (2-3 at concurrency 2); sa-bench's request
    # gate fails a phase above 5% failures, so the phase needs more than 60 requests: 80 short ones.
    sets += ["--set", "benchmark.num_prompts_mult=40", "--set", "benchmark.osl=32"]
    job = srt.apply_one(RECIPES / "agg-long.yaml", *sets)
    wait_until_benchmarking(srt, job)
    srt.kill(srt.find_step_task(job, "agg_1_node1"))

    status = srt.wait(job, timeout=90)
    assert (status["status"], status["exit_code"]) == ("completed", 0)
    record = json.loads((job.job_dir / "logs" / "worker_restarts.json").read_text())
    assert record["total_restarts"] == 1
    assert record["endpoints"]["agg_1"]["restarts"] == 1
    assert record["endpoints"]["agg_0"]["restarts"] == 0
    (event,) = record["events"]
    assert (event["worker"], event["exit_code"], event["outcome"]) == (
        "agg_1_node1",
        137,
        "relaunched",
    )
    assert event["backoff_seconds"] == 1.0
    rollup = json.loads((job.job_dir / "logs" / "benchmark-rollup.json").read_text())
    assert rollup["runs"][0]["completed_requests"] > 0
    sweep = srt.sweep_log(job)
    assert "agg_1: relaunched as agg_1_node1_r1" in sweep
    assert "Worker restarts: 1 (agg_1 x1" in sweep
    lock = yaml.safe_load((job.job_dir / "recipe.lock.yaml").read_text())["lock"]
    assert lock["worker_restarts"]["total_restarts"] == 1
    assert (job.job_dir / "logs" / "node1_agg_w1.out.1").exists()
