"""Scenario 1: a real ``srtctl apply`` of an aggregated Dynamo mocker job on one node of the
slurm-lab cluster, then the job folder: plan, logs, lockfile (with the workers' fingerprints and
the identity check), status events, host setup and teardown, a rollup with throughput at every
concurrency, and the RUN_EVAL post_eval step."""

from __future__ import annotations

import importlib.metadata
import json

import yaml
from e2e_jobs import RECIPES


def test_aggregated_mocker_job_benchmarks_two_concurrencies(srt, tmp_path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    dynamo = importlib.metadata.version("ai-dynamo")
    job = srt.apply_one(
        RECIPES / "agg.yaml",
        "--set",
        f"identity.frameworks.ai-dynamo={dynamo}",
        "--set",
        "identity.frameworks.vllm=0.0.0",
        "--set",
        "post_eval.command=[bash, -c, 'echo eval against {endpoint} as $MODEL_NAME']",
        # RUN_EVAL in the submitting shell reaches the job (sbatch exports it)
        env={"E2E_MARKERS": str(markers), "RUN_EVAL": "true"},
    )
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
        # a healthy run is judged valid with no reason (srt-bench validity)
        assert run["validity"]["verdict"] == "valid", run["validity"]
        assert not run["validity"].get("reasons"), run["validity"]
    assert rollup["validity"]["verdict"] == "valid", rollup["validity"]
    assert not rollup["validity"].get("reasons"), rollup["validity"]

    logs = job.job_dir / "logs"
    for name in ("node1_agg_w0.out", "node1_agg_w1.out", "node1_frontend_0.out", "benchmark.out"):
        assert (logs / name).stat().st_size > 0, name
    sweep = srt.sweep_log(job)
    assert f"srt job {job.job_id} finished with exit code 0" in sweep

    lock = yaml.safe_load((job.job_dir / "recipe.lock.yaml").read_text())["lock"]
    assert lock["slurm"]["job_id"] == job.job_id
    assert lock["status"] == "completed"
    assert lock["exit_code"] == 0
    # Each worker's srun step captured its fingerprint on its node, inside the step.
    assert sorted(lock["fingerprints"]) == ["agg_w0", "agg_w1"]
    for fingerprint in lock["fingerprints"].values():
        assert fingerprint["frameworks"]["dynamo"] == dynamo
        assert fingerprint["cpu"]["slurm"]["SLURM_CPUS_ON_NODE"]
    # RUN_EVAL: the post_eval step ran on the head node after the benchmark.
    evals = [p for p in plan["processes"] if p["phase"] == "post_eval"]
    assert [(p["name"], p["nodes"]) for p in evals] == [("post_eval", ["node1"])]
    endpoint = plan["frontend_url"]
    assert (logs / "eval.out").read_text() == f"eval against {endpoint} as tiny-word\n"
    assert "post_eval exited with code 0" in sweep
    # The identity check ran after the health gate: one match, one mismatch (a warning only).
    assert lock["verification"]["result"] == "1 verified, 0 declared, 1 FAILED"
    assert "  !! frameworks.vllm: declared 0.0.0, not installed" in sweep

    stages = [e["stage"] for e in srt.events(job)]
    for stage in ("head_infrastructure", "workers", "frontend", "health", "benchmark"):
        assert stage in stages, stages
    assert srt.events(job)[-1]["status"] == "completed"
