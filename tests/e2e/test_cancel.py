"""Scenario 6: ``scancel`` of a job in the middle of its benchmark: the supervisor cleans up, the
host teardown still runs (Slurm refuses new steps once a job is cancelled, so the runtime starts
each teardown step armed at the beginning), and the job ends ``cancelled``."""

from __future__ import annotations

from e2e_jobs import RECIPES


def wait_until_benchmarking(srt, job) -> None:
    srt.wait_for_line(job.job_dir / "logs" / "benchmark.out", "measured requests", timeout=60)


def test_scancel_during_the_benchmark_cleans_up_and_tears_down(srt, tmp_path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    job = srt.apply_one(RECIPES / "agg-cancel.yaml", env={"E2E_MARKERS": str(markers)})
    wait_until_benchmarking(srt, job)
    assert (markers / "setup.node1").exists()
    srt.run(["scancel", job.job_id])

    status = srt.wait(job, timeout=60)
    assert (status["status"], status["exit_code"]) == ("cancelled", 1), status
    assert status["message"].startswith("stopped: received SIGTERM during stage benchmark")
    assert (markers / "teardown.node1").exists()
    stages = [e["stage"] for e in srt.events(job)]
    assert stages[-1] == "cleanup"
    assert "host teardown host_teardown_node1 on node1 done" in srt.sweep_log(job)
    assert srt.processes(job) == []
