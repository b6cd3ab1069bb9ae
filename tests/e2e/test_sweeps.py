"""Scenario 8: one ``srtctl apply`` of a two-point sweep submits two jobs, and one of an override
file with two variants submits two jobs; each job folder holds its own resolved recipe and
results."""

from __future__ import annotations

import json

import yaml
from e2e_jobs import RECIPES


def _finished(srt, job) -> tuple[dict, dict]:
    status = srt.wait(job)
    assert (status["status"], status["exit_code"]) == ("completed", 0)
    config = yaml.safe_load((job.job_dir / "config.yaml").read_text())
    rollup = json.loads((job.job_dir / "logs" / "benchmark-rollup.json").read_text())
    return config, rollup


def test_a_two_point_sweep_submits_and_runs_two_jobs(srt) -> None:
    jobs = srt.apply(RECIPES / "sweep.yaml")
    assert sorted(j.job_name for j in jobs) == ["e2e-sweep_osl12", "e2e-sweep_osl8"]
    assert len({j.job_id for j in jobs}) == 2
    for job in jobs:
        config, rollup = _finished(srt, job)
        osl = int(job.job_name.rsplit("osl", 1)[1])
        assert config["benchmark"]["osl"] == osl
        assert rollup["config"]["osl"] == osl
        (run,) = rollup["runs"]
        assert run["completed_requests"] == 20
        assert run["total_output_tokens"] <= 20 * osl


def test_an_override_file_submits_one_job_per_variant(srt) -> None:
    jobs = srt.apply(RECIPES / "overrides.yaml")
    by_name = {j.job_name: j for j in jobs}
    assert sorted(by_name) == ["e2e-override_one", "e2e-override_two"]
    expected = {"e2e-override_one": (1, 8, [2]), "e2e-override_two": (2, 16, [2, 4])}
    for name, (workers, osl, concurrencies) in expected.items():
        job = by_name[name]
        config, rollup = _finished(srt, job)
        assert config["roles"]["agg"]["workers"] == workers
        plan = json.loads((job.job_dir / "plan.json").read_text())
        assert len([p for p in plan["processes"] if p["kind"] == "worker"]) == workers
        assert rollup["config"]["osl"] == osl
        assert [r["concurrency"] for r in rollup["runs"]] == concurrencies
        assert all(r["throughput_toks"] > 0 for r in rollup["runs"])
