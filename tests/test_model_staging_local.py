"""``model.stage_dir`` in a real local job: ``srtctl apply --local`` of the quickstart on two
simulated worker nodes with a staging folder, the real Dynamo frontend and mocker workers and the
sa-bench client.

The local launcher's nodes are this one machine, so the job stages once (on the first worker node)
before any worker starts; both mocker workers load the staged copy, which matches the model folder
file for file (content and mtime), and the benchmark completes against them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "examples" / "models" / "tiny-word"

pytestmark = pytest.mark.slow


def _tree(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns // 1_000_000_000)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_the_mocker_workers_load_the_staged_copy(tmp_path: Path) -> None:
    srtctl = shutil.which("srtctl")
    assert srtctl is not None, "srtctl is not installed in this environment (make sync)"
    model = tmp_path / "shared" / "tiny-word"
    shutil.copytree(TINY, model)
    (model / "weights.bin").write_bytes(os.urandom(2 * 1024 * 1024))
    stage_dir = tmp_path / "node-local" / "models"
    staged = stage_dir / "tiny-word"
    out = tmp_path / "out"
    argv = [srtctl, "apply", "--local", "-f", "examples/quickstart.yaml", "-o", str(out)]
    argv += ["--set", f"model.path={model}", "--set", f"model.stage_dir={stage_dir}"]
    argv += ["--set", "roles.agg.nodes=2"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [job_dir] = [p for p in out.iterdir() if p.is_dir() and p.name.startswith("local-")]
    logs = job_dir / "logs"

    plan = json.loads((job_dir / "plan.json").read_text())
    procs = {p["name"]: p for p in plan["processes"]}
    staging = [p for p in plan["processes"] if p["phase"] == "model_staging"]
    assert [p["name"] for p in staging] == ["stage_model_node-01"]
    assert staging[0]["argv"][2:] == [str(model), str(staged)]
    workers = [p for p in plan["processes"] if p["kind"] == "worker"]
    assert sorted(p["nodes"][0] for p in workers) == ["node-01", "node-02"]
    for worker in workers:
        argv_ = worker["argv"]
        assert argv_[argv_.index("--model-path") + 1] == str(staged)
    assert procs["benchmark"]

    assert _tree(staged) == _tree(model)
    log = (logs / "stage_model_node-01.out").read_text()
    assert "5 of 5 files to copy" in log and "verified 5 files" in log, log

    # The staging step ended before the first worker started.
    events = [
        json.loads(line)
        for line in (job_dir / "status_events.jsonl").read_text().splitlines()
        if '"event":"process"' in line
    ]
    order = [(e["what"], e["process"]) for e in events]
    exited = order.index(("exited", "stage_model_node-01"))
    first_worker = min(order.index(("started", w["name"])) for w in workers)
    assert exited < first_worker, order

    rollup = json.loads((logs / "benchmark-rollup.json").read_text())
    assert rollup["runs"] and all(run["completed_requests"] > 0 for run in rollup["runs"])
