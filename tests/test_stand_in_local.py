"""``srtctl apply --local --stand-in-engines``: our own recipes (no corpus needed) run with their
real frontends here, only the engines replaced; dry-run shows what is replaced and by what."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "tests" / "recipes"
SHORT = ["--set", "benchmark.concurrencies=[2]", "--set", "benchmark.osl=8"]
SHORT += ["--set", "benchmark.isl=32", "--set", "health_check.interval_seconds=1"]
# every request asks for exactly osl tokens (sa-bench's default draws 0.8-1.0 x osl)
SHORT += ["--set", "benchmark.random_range_ratio=1.0"]


def _srtctl() -> str:
    srtctl = shutil.which("srtctl")
    assert srtctl is not None, "srtctl is not installed in this environment (make sync)"
    return srtctl


def _apply(recipe: Path, out: Path, *extra: str) -> tuple[Path, dict[str, Any]]:
    argv = [_srtctl(), "apply", "--local", "--stand-in-engines", "-f", str(recipe)]
    argv += ["-o", str(out), *SHORT, *extra]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [job_dir] = [p for p in out.iterdir() if p.is_dir() and p.name.startswith("local-")]
    status = json.loads((job_dir / "status.json").read_text())
    assert (status["status"], status["exit_code"]) == ("completed", 0)
    return job_dir, json.loads((job_dir / "plan.json").read_text())


@pytest.mark.slow
def test_sglang_workers_behind_the_real_sglang_router(tmp_path: Path) -> None:
    job_dir, plan = _apply(RECIPES / "sglang-agg-sglang-router.yaml", tmp_path)
    workers = [p for p in plan["processes"] if p["kind"] == "worker"]
    # two TP-4 workers, one per node of 4 GPUs: each is a stand-in server on its own node
    assert [w["argv"][1:3] for w in workers] == [["-m", "srt_runtime.standin"]] * 2
    assert len({w["nodes"][0] for w in workers}) == 2
    assert all("sglang.launch_server" in " ".join(w["stand_in_for"]) for w in workers)
    (router,) = [p for p in plan["processes"] if p["kind"] == "frontend"]
    assert router["argv"][1:3] == ["-m", "sglang_router.launch_router"]
    rollup = json.loads((job_dir / "logs" / "benchmark-rollup.json").read_text())
    (run,) = rollup["runs"]
    # exactly the tokens asked for, counted by the client through the real router
    assert run["total_output_tokens"] == 8 * run["completed_requests"]
    assert rollup["config"]["model"] == "own/tiny"
    # the router asked both stand-ins for their info and sent them traffic
    router_log = next((job_dir / "logs").glob("*sglang-router*.out")).read_text()
    assert "127.0.0.1" in router_log


@pytest.mark.slow
def test_vllm_workers_behind_the_real_vllm_router(tmp_path: Path) -> None:
    job_dir, plan = _apply(RECIPES / "vllm-agg-vllm-router.yaml", tmp_path)
    (router,) = [p for p in plan["processes"] if p["kind"] == "frontend"]
    assert Path(router["argv"][0]).name == "vllm-router"
    rollup = json.loads((job_dir / "logs" / "benchmark-rollup.json").read_text())
    assert all(run["total_output_tokens"] > 0 for run in rollup["runs"])


def test_dry_run_names_every_replaced_process() -> None:
    argv = [_srtctl(), "dry-run", "--stand-in-engines", "-f", str(RECIPES / "trtllm-agg-smg.yaml")]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "--- stand-in engines (" in text and "worker processes replaced" in text
    assert "stands in for:" in text
    assert "srt_runtime.standin" in text and "smg launch" in text
    assert "container runtime: none" in text


def test_a_frontend_that_cannot_run_here_is_refused_not_faked() -> None:
    recipe = RECIPES / "atom-disagg-atomesh.yaml"
    argv = [_srtctl(), "dry-run", "--stand-in-engines", "-f", str(recipe)]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "$.frontend.type: atomesh cannot run with stand-in engines" in done.stderr
    assert "no PyPI distribution provides atomesh" in done.stderr
