"""Reading the allocation facts and planning the job in its directory (read_facts -> plan_job)."""

from __future__ import annotations

from pathlib import Path

import pytest

from srt_runtime.errors import PlanLoadError
from srt_runtime.facts import AllocationFacts, read_facts
from srt_runtime.plan_io import plan_from_job_dir, read_plan, write_plan

RECIPE = """\
schema: 2
name: test-job
model: {path: /models/qwen3, container: dynamo-sglang.sqsh, precision: bf16}
resources: {gpu_type: h100, gpus_per_node: 8}
engine: sglang
roles:
  agg: {nodes: 1, workers: 1}
"""


def test_facts_of_a_plain_and_a_het_job() -> None:
    env = {"SLURM_JOBID": "77", "SLURM_NODELIST": "n[1-2]", "SRTCTL_OUTPUT_DIR": "/o/77"}
    assert read_facts(env) == AllocationFacts(job_id="77", nodelist="n[1-2]", output_dir="/o/77")
    het = {
        "SLURM_JOB_ID": "78",
        "SLURM_JOB_NODELIST": "n[1-3]",
        "SLURM_HET_SIZE": "2",
        "SLURM_JOB_NODELIST_HET_GROUP_0": "n1",
        "SLURM_JOB_NODELIST_HET_GROUP_1": "n[2-3]",
        "SRTCTL_SETUP_SCRIPT": "fix.sh",
    }
    assert read_facts(het) == AllocationFacts(
        job_id="78", nodelist="n[1-3]", het_groups=("n1", "n[2-3]"), setup_script="fix.sh"
    )


def test_facts_outside_slurm_are_refused() -> None:
    with pytest.raises(PlanLoadError) as err:
        read_facts({})
    assert str(err.value) == (
        "Not running in SLURM: SLURM_JOB_ID is not set; run inside an allocation, or pass an "
        "already-planned job with --plan <plan.json>"
    )
    with pytest.raises(PlanLoadError) as err:
        read_facts({"SLURM_JOB_ID": "5", "SLURM_NODELIST": "n1", "SLURM_HET_SIZE": "2"})
    assert str(err.value) == (
        "job 5: SLURM_HET_SIZE=2 but SLURM_JOB_NODELIST_HET_GROUP_0 is not set"
    )


def test_the_job_is_planned_from_its_config_yaml(tmp_path: Path) -> None:
    job_dir = tmp_path / "77"
    job_dir.mkdir()
    (job_dir / "config.yaml").write_text(RECIPE)
    env = {"SLURM_JOB_ID": "77", "SLURM_JOB_NODELIST": "node-[01-02]"}

    plan = plan_from_job_dir(job_dir, env, cwd=tmp_path)

    assert (plan.job_id, plan.nodes) == ("77", ("node-01", "node-02"))
    assert "agg_0_node-01" in [p.name for p in plan.processes]
    write_plan(plan, tmp_path / "plan.json")
    assert read_plan(tmp_path / "plan.json") == plan


def test_a_job_dir_without_config_or_with_a_bad_recipe(tmp_path: Path) -> None:
    env = {"SLURM_JOB_ID": "77", "SLURM_JOB_NODELIST": "node-01"}
    with pytest.raises(PlanLoadError) as err:
        plan_from_job_dir(tmp_path, env, cwd=tmp_path)
    assert str(err.value) == (
        f"{tmp_path}/config.yaml: the job directory has no config.yaml (srtctl writes it at submit)"
    )
    (tmp_path / "config.yaml").write_text(RECIPE.replace("nodes: 1", "nodes: 4"))
    with pytest.raises(PlanLoadError) as err:
        plan_from_job_dir(tmp_path, env, cwd=tmp_path)
    assert str(err.value).startswith(f"cannot plan job 77 from {tmp_path}/config.yaml: ")


def test_a_local_cluster_reaches_every_node_on_loopback(tmp_path: Path) -> None:
    job_dir = tmp_path / "78"
    job_dir.mkdir()
    (job_dir / "config.yaml").write_text(RECIPE)
    (tmp_path / "srtslurm.yaml").write_text("launcher: local\n")
    env = {"SLURM_JOB_ID": "78", "SLURM_JOB_NODELIST": "node-[01-02]"}

    plan = plan_from_job_dir(job_dir, env, cwd=tmp_path)

    assert (plan.launcher, plan.container_runtime) == ("local", "none")
    assert plan.health.url.startswith("http://127.0.0.1:")


def test_the_plan_records_what_srtctl_flag_check_did(tmp_path: Path) -> None:
    job_dir = tmp_path / "79"
    job_dir.mkdir()
    (job_dir / "config.yaml").write_text(RECIPE)
    env = {"SLURM_JOB_ID": "79", "SLURM_JOB_NODELIST": "node-[01-02]"}
    assert plan_from_job_dir(job_dir, env, cwd=tmp_path).flag_check is None
    skipped = {**env, "SRTCTL_FLAG_CHECK": "skipped"}  # exported by the batch script
    assert plan_from_job_dir(job_dir, skipped, cwd=tmp_path).flag_check == "skipped"
