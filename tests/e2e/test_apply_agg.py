"""Scenario 1: a real ``srtctl apply`` of an aggregated Dynamo mocker job on one node of the
slurm-lab cluster, then the job folder: plan, logs, lockfile, status events, host setup and
teardown, and a rollup with throughput at every concurrency."""

from __future__ import annotations

import json

import yaml
from e2e_jobs import RECIPES


def test_aggregated_mocker_job_benchmarks_two_concurrencies(srt, tmp_path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    job = srt.apply_one(RECIPES / "agg.yaml", env={"E2E_MARKERS": str(markers)})
    status = srt.wait(job)
    assert (status["status"], status["exit_code"]) == ("completed", 0)
    assert sorted(p.name for p in markers.iterdir()) == ["setup.node1", "teardown.node1"]
    assert "host teardown host_teardown_node1 on node1 done" in srt.sweep_log(job)

    plan = json.loads((job.job_dir / "plan.json").read_text())
    assert plan["job_id"] == job.job_id
    workers = [p for p in plan["processes"] if p["kind"] == "worker"]
    assert len(workers) == 2
    assert {n for p in plan["processes"] for n in p["nodes"]} == {"node1"}

    rollup = json.loads((job.job_dir / "logs" / "benchmark-rollup.json").read_text())
    runs = {r["concurrency"]: r for r in rollup["runs"]}
    assert sorted(runs) == [2, 4]
    for concurrency, run in runs.items():
        assert run["throughput_toks"] > 0, concurrency
        assert run["completed_requests"] == 10 * concurrency

    logs = job.job_dir / "logs"
    for name in ("node1_agg_w0.out", "node1_agg_w1.out", "node1_frontend_0.out", "benchmark.out"):
        assert (logs / name).stat().st_size > 0, name
    sweep = srt.sweep_log(job)
    assert f"srt job {job.job_id} finished with exit code 0" in sweep

    lock = yaml.safe_load((job.job_dir / "recipe.lock.yaml").read_text())["lock"]
    assert lock["slurm"]["job_id"] == job.job_id
    assert lock["status"] == "completed"
    assert lock["exit_code"] == 0

    stages = [e["stage"] for e in srt.events(job)]
    for stage in ("head_infrastructure", "workers", "frontend", "health", "benchmark"):
        assert stage in stages, stages
    assert srt.events(job)[-1]["status"] == "completed"
