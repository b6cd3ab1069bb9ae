"""Model staging through the supervisor: the planner's ``stage_model_<node>`` steps and their
script (srt_planner.staging) run with the LocalLauncher on a folder the test makes.

The first run copies, the second finds the manifests equal and skips, a corrupted copy (another
size, or other bytes and another mtime) is copied again and verified; two steps staging one
destination at once (a stage_dir on a shared filesystem) both succeed; a step that fails stops
the run before any worker starts, and the diagnosis names the node and the log.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
from rt_plans import Run, execute, fake, plan, spec

from srt_planner import plan_job
from srt_planner.plan import JobPlan, ProcessSpec
from srt_planner.staging import STAGE_SCRIPT
from srt_schema.cluster import ClusterConfig
from srt_schema.recipe import Recipe

LOCAL = ClusterConfig(launcher="local")
BIG = 3 * 1024 * 1024


def _model(root: Path) -> Path:
    """A model folder: a few small files, a nested one and a 3 MB shard."""
    model = root / "shared" / "tiny-model"
    (model / "sub").mkdir(parents=True)
    (model / "config.json").write_text('{"model_type": "llama"}\n')
    (model / "tokenizer.json").write_text('{"version": "1.0"}\n')
    (model / "sub" / "notes.txt").write_text("nested\n")
    (model / "model-00001.safetensors").write_bytes(os.urandom(BIG))
    return model


def _staging_plan(model: Path, stage_dir: Path, job_dir: Path) -> tuple[JobPlan, ProcessSpec]:
    """The staging steps and script of a real plan, plus one worker that must start after them."""
    recipe = msgspec.convert(
        {
            "schema": 2,
            "name": "stage",
            "model": {
                "path": str(model),
                "container": "none",
                "precision": "bf16",
                "stage_dir": str(stage_dir),
            },
            "resources": {"gpus_per_node": 1},
            "engine": "mocker",
            "roles": {"agg": {"nodes": 1, "workers": 1}},
            "environment": {"STAGE_PARALLEL": "2"},
        },
        Recipe,
    )
    full = plan_job(recipe, LOCAL, ["node-01"], "4242", log_dir=str(job_dir / "logs"))
    (step,) = [p for p in full.processes if p.phase == "model_staging"]
    files = tuple(f for f in full.files if f.path == STAGE_SCRIPT)
    worker = spec("agg_0_node-01", fake("exit", 0), phase="workers", oneshot=True)
    return plan(step, worker, files=files), step


def _run(job_plan: JobPlan, job_dir: Path) -> Run:
    (job_dir / "logs").mkdir(parents=True, exist_ok=True)
    return execute(job_plan, job_dir)


def _tree(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns // 1_000_000_000)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_stage_skip_and_restage_after_corruption(tmp_path: Path) -> None:
    model = _model(tmp_path)
    stage_dir = tmp_path / "local" / "models"
    staged = stage_dir / "tiny-model"
    job_plan, step = _staging_plan(model, stage_dir, tmp_path / "job1")
    assert step.argv[2:] == (str(model), str(staged))

    first = _run(job_plan, tmp_path / "job1")
    assert first.exit_code == 0, first.diagnosis
    log = first.log("stage_model_node-01.out")
    assert "4 of 4 files to copy" in log and "2 at a time" in log  # STAGE_PARALLEL=2
    assert "verified 4 files" in log
    assert _tree(staged) == _tree(model)  # content and mtime (to the second) of every file
    started = [name for what, name in first.processes() if what == "started"]
    assert started == ["stage_model_node-01", "agg_0_node-01"]

    second = _run(job_plan, tmp_path / "job2")
    assert second.exit_code == 0, second.diagnosis
    assert "4 files (3.1 MB) up to date, skipped" in second.log("stage_model_node-01.out")

    # Other bytes of the same size and another mtime; another size for a second file.
    shard = staged / "model-00001.safetensors"
    shard.write_bytes(os.urandom(BIG))
    os.utime(shard, (1_000_000_000, 1_000_000_000))
    (staged / "sub" / "notes.txt").write_text("truncated")
    (staged / "stale.bin").write_text("not in the model")
    third = _run(job_plan, tmp_path / "job3")
    assert third.exit_code == 0, third.diagnosis
    log = third.log("stage_model_node-01.out")
    assert "2 of 4 files to copy" in log and "1 to remove" in log
    assert "verified 4 files" in log
    assert _tree(staged) == _tree(model)


def test_two_steps_staging_one_destination_at_once_both_succeed(tmp_path: Path) -> None:
    model = _model(tmp_path)
    for i in range(8):
        (model / f"shard-{i}.bin").write_bytes(os.urandom(2 * 1024 * 1024))
    stage_dir = tmp_path / "shared-stage"
    job_plan, step = _staging_plan(model, stage_dir, tmp_path / "job")
    twins = tuple(
        msgspec.structs.replace(
            step, name=f"stage_model_{node}", nodes=(node,), log_file=f"stage_model_{node}.out"
        )
        for node in ("node-01", "node-02")
    )
    job_plan = msgspec.structs.replace(job_plan, processes=twins)
    run = _run(job_plan, tmp_path / "job")
    assert run.exit_code == 0, run.diagnosis
    for node in ("node-01", "node-02"):
        log = run.log(f"stage_model_{node}.out")
        # A step that looks once the other finished finds the copy up to date.
        assert "verified 12 files" in log or ("12 files (" in log and "up to date" in log), log
    assert _tree(stage_dir / "tiny-model") == _tree(model)


def test_a_failed_staging_step_fails_the_job_before_any_worker_and_names_node_and_log(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "shared" / "gone"
    job_plan, _ = _staging_plan(missing, tmp_path / "local", tmp_path / "job")
    run = _run(job_plan, tmp_path / "job")
    assert run.exit_code == 1
    log = tmp_path / "job" / "logs" / "stage_model_node-01.out"
    assert (
        f"reason: model staging failed on: node-01 (stage_model_node-01 exited with code 2, "
        f"see {log})"
    ) in run.diagnosis
    assert "node:   node-01" in run.diagnosis
    assert f"the model folder {missing} does not exist or is not a folder" in run.diagnosis
    assert [name for what, name in run.processes() if what == "started"] == ["stage_model_node-01"]
    assert ("before_workers", "running") in run.stages
    assert ("workers", "running") not in run.stages
