"""Sidecar-mode recipes (vLLM, TRT-LLM) run end to end with ``srtctl apply --local
--stand-in-engines``: each engine + sidecar pair becomes a Dynamo mocker registered where the
sidecar registers, behind the real Dynamo frontend (as the SGLang sidecar recipe of the corpus
does in the corpus-run tier). Starts a job: run under ``flock /tmp/srt-jobs.lock``."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "tests" / "recipes"
SHORT = ["--set", "benchmark.concurrencies=[2]", "--set", "benchmark.osl=8"]
SHORT += ["--set", "benchmark.isl=32", "--set", "health_check.interval_seconds=1"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("recipe", "sidecar", "mockers"),
    [
        ("vllm-sidecar.yaml", "dynamo.vllm.sidecar", 2),
        # One two-node worker: its follower node waits (``sleep infinity``), rank 0 registers.
        ("trtllm-sidecar.yaml", "dynamo.trtllm.sidecar", 1),
    ],
)
def test_a_sidecar_recipe_runs_with_stand_in_engines(
    tmp_path: Path, recipe: str, sidecar: str, mockers: int
) -> None:
    srtctl = shutil.which("srtctl")
    assert srtctl is not None, "srtctl is not installed in this environment (make sync)"
    argv = [srtctl, "apply", "--local", "--stand-in-engines", "-f", str(RECIPES / recipe)]
    argv += ["-o", str(tmp_path), *SHORT]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [job_dir] = [p for p in tmp_path.iterdir() if p.is_dir() and p.name.startswith("local-")]
    status = json.loads((job_dir / "status.json").read_text())
    assert (status["status"], status["exit_code"]) == ("completed", 0)
    plan = json.loads((job_dir / "plan.json").read_text())
    workers = [p for p in plan["processes"] if p["kind"] == "worker"]
    serving = [w for w in workers if w["argv"][:1] != ["sleep"]]
    assert len(serving) == mockers
    for worker in serving:
        assert worker["argv"][1:3] == ["-m", "dynamo.mocker"]
    for worker in workers:
        assert sidecar in " ".join(worker["stand_in_for"])
    rollup = json.loads((job_dir / "logs" / "benchmark-rollup.json").read_text())
    assert rollup["config"]["model"] == "own/tiny"
    assert all(run["total_output_tokens"] > 0 for run in rollup["runs"])
