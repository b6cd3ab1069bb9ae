"""Model staging (``model.stage_dir``) in real Slurm jobs: the disaggregated mocker recipe on all
three slurm-lab nodes with a model folder of a few hundred MB the test makes.

Each job runs one ``stage_model_<node>`` srun step per worker node, all at once, before any worker
starts, and every worker loads the staged copy. The first job copies; the second finds the copy
up to date and skips; after a staged shard is corrupted (other bytes, another mtime) the third
copies it again and verifies. The lab's nodes share this machine's filesystem, so the three steps
stage one destination concurrently, as they would on a shared stage_dir: each copies to its own
temporary names and renames, and each verifies the whole copy.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from e2e_jobs import MODEL, RECIPES, SrtOnSlurm, Submission

NODES = ("node1", "node2", "node3")
MB = 1024 * 1024
#: The shards of the test's model: a few hundred MB together.
SHARDS = {"model-00001.safetensors": 120 * MB, "model-00002.safetensors": 120 * MB}
FILES = len(SHARDS) + len(list(MODEL.iterdir()))


def _model(root: Path) -> Path:
    model = root / "shared" / "tiny-word"
    shutil.copytree(MODEL, model)
    for name, size in SHARDS.items():
        with (model / name).open("wb") as out:
            for _ in range(size // (8 * MB)):
                out.write(os.urandom(8 * MB))
    return model


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    """path -> (size, mtime seconds); the content is compared separately for the shards."""
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns // 1_000_000_000)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _same_bytes(a: Path, b: Path) -> bool:
    with a.open("rb") as fa, b.open("rb") as fb:
        while True:
            x, y = fa.read(8 * MB), fb.read(8 * MB)
            if x != y:
                return False
            if not x:
                return True


def _job(srt: SrtOnSlurm, model: Path, stage_dir: Path) -> tuple[Submission, dict[str, str]]:
    job = srt.apply_one(
        RECIPES / "disagg.yaml",
        "--set",
        f"model.path={model}",
        "--set",
        f"model.stage_dir={stage_dir}",
    )
    status = srt.wait(job, timeout=180.0)
    assert (status["status"], status["exit_code"]) == ("completed", 0), status
    logs = job.job_dir / "logs"
    return job, {node: (logs / f"stage_model_{node}.out").read_text() for node in NODES}


def _check_plan(job: Submission, staged: Path) -> None:
    plan: dict[str, Any] = json.loads((job.job_dir / "plan.json").read_text())
    steps = [p for p in plan["processes"] if p["phase"] == "model_staging"]
    assert [(p["name"], p["nodes"]) for p in steps] == [
        (f"stage_model_{node}", [node]) for node in NODES
    ]
    for step in steps:
        assert step["oneshot"] and step["critical"]
        assert step["argv"][-1] == str(staged)
    workers = [p for p in plan["processes"] if p["kind"] == "worker"]
    assert {p["nodes"][0] for p in workers} == set(NODES)
    for worker in workers:
        argv = worker["argv"]
        assert argv[argv.index("--model-path") + 1] == str(staged)


def _staging_before_workers(job: Submission) -> None:
    lines = (job.job_dir / "status_events.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines if line.strip()]
    order = [(e["what"], e["process"], e["kind"]) for e in events if e.get("event") == "process"]
    staged = [i for i, (what, name, _) in enumerate(order) if what == "exited" and "stage" in name]
    started = [
        i for i, (what, _, kind) in enumerate(order) if what == "started" and kind == "worker"
    ]
    assert len(staged) == len(NODES) and started, order
    assert max(staged) < min(started), order


def test_three_nodes_stage_skip_and_restage_a_corrupted_shard(
    srt: SrtOnSlurm, tmp_path: Path
) -> None:
    model = _model(tmp_path)
    stage_dir = tmp_path / "node-local" / "models"
    staged = stage_dir / "tiny-word"

    first, logs = _job(srt, model, stage_dir)
    _check_plan(first, staged)
    _staging_before_workers(first)
    # The nodes share the destination: at least one copies; one that looks only after that copy
    # has finished finds it up to date (seen in CI). Every node ends with a verified copy.
    verified = [node for node, log in logs.items() if f"verified {FILES} files" in log]
    assert verified, logs
    for node, log in logs.items():
        assert f"on {node}" in log, log
        assert f"verified {FILES} files" in log or "up to date, skipped" in log, (node, log)
    assert _tree(staged) == _tree(model)
    assert all(_same_bytes(model / name, staged / name) for name in SHARDS)

    second, logs = _job(srt, model, stage_dir)
    for log in logs.values():
        assert "up to date, skipped" in log, log
    _staging_before_workers(second)

    shard = staged / "model-00002.safetensors"
    with shard.open("r+b") as out:
        out.seek(64 * MB)
        out.write(os.urandom(MB))
    os.utime(shard, (1_000_000_000, 1_000_000_000))
    assert not _same_bytes(model / shard.name, shard)
    third, logs = _job(srt, model, stage_dir)
    # The nodes share the destination: the first to look copies the shard again; one that
    # looks after that copy finds it up to date. Every node ends with a verified copy.
    copied = [node for node, log in logs.items() if f"1 of {FILES} files to copy" in log]
    assert copied, logs
    for node, log in logs.items():
        assert f"verified {FILES} files" in log or "up to date, skipped" in log, (node, log)
    assert _tree(staged) == _tree(model)
    assert _same_bytes(model / shard.name, shard)
    _staging_before_workers(third)
