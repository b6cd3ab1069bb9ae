"""Jobs with ``model.path: hf:<org>/<name>`` on the local launcher, against a hub on 127.0.0.1.

The hub is ``srt_bench.testing.HubServer`` serving ``examples/models/tiny-word`` as
``Qwen/Qwen3-0.6B`` (the real ``huggingface_hub`` client talks to it through ``HF_ENDPOINT``);
the engines are the stand-in Dynamo mockers (``--stand-in-engines``), the frontend, the
``bench_tokenizer`` step and the sa-bench client are the real programs. ``HF_HOME`` is one folder
for both jobs, as a cluster's shared storage is.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from srt_bench.testing import HubServer
from srt_bench.testing.hub_server import repo_commit

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "examples" / "models" / "tiny-word"
HUB_ID = "Qwen/Qwen3-0.6B"
SHORT = ["--set", "benchmark.concurrencies=[2]", "--set", "benchmark.osl=8"]
SHORT += ["--set", "benchmark.isl=32", "--set", "benchmark.random_range_ratio=1.0"]
SHORT += ["--set", "health_check.interval_seconds=1"]

pytestmark = pytest.mark.slow


def _apply(
    out: Path, model: str, env: dict[str, str]
) -> tuple[subprocess.CompletedProcess[str], Path]:
    srtctl = shutil.which("srtctl")
    assert srtctl is not None, "srtctl is not installed in this environment (make sync)"
    argv = [srtctl, "apply", "--local", "--stand-in-engines", "-f", "examples/quickstart.yaml"]
    argv += ["-o", str(out), "--set", f"model.path={model}", *SHORT]
    base = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    done = subprocess.run(
        argv,
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**base, **env},
        timeout=300,  # hang guard
        check=False,
    )
    [job_dir] = [p for p in out.iterdir() if p.is_dir() and p.name.startswith("local-")]
    return done, job_dir


def _status(job_dir: Path) -> dict[str, Any]:
    status: dict[str, Any] = json.loads((job_dir / "status.json").read_text())
    return status


def test_the_tokenizer_is_fetched_once_into_the_shared_cache_and_reused_offline(
    tmp_path: Path,
) -> None:
    home = tmp_path / "shared-hf-home"
    with HubServer({HUB_ID: TINY}) as hub:
        env = {"HF_ENDPOINT": hub.url, "HF_HOME": str(home)}
        first, job1 = _apply(tmp_path / "one", f"hf:{HUB_ID}", env)
        assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
        fetched = hub.requests
        second, job2 = _apply(tmp_path / "two", f"hf:{HUB_ID}", {**env, "HF_HUB_OFFLINE": "1"})
        assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
        assert hub.requests == fetched  # the second job asked the hub nothing
    # the first job fetched the tokenizer files, each once, and nothing else
    gets = [p for m, p in fetched if m == "GET" and "/resolve/" in p]
    assert sorted(gets) == sorted(
        f"/{HUB_ID}/resolve/main/{f}" for f in ("tokenizer_config.json", "config.json")
    )  # tokenizer.json is an LFS file: fetched through its redirect
    assert sum(p.startswith("/lfs/") for _m, p in fetched) == 1
    commit = repo_commit(TINY)
    snapshot = home / "hub" / "models--Qwen--Qwen3-0.6B" / "snapshots" / commit
    assert (snapshot / "tokenizer.json").read_bytes() == (TINY / "tokenizer.json").read_bytes()
    for job_dir in (job1, job2):
        assert (_status(job_dir)["status"], _status(job_dir)["exit_code"]) == ("completed", 0)
        lock = yaml.safe_load((job_dir / "recipe.lock.yaml").read_text())["lock"]
        assert lock["hf_model"]["repo"] == HUB_ID and lock["hf_model"]["commit"] == commit
        rollup = json.loads((job_dir / "logs" / "benchmark-rollup.json").read_text())
        assert all(run["total_output_tokens"] > 0 for run in rollup["runs"])
        plan = json.loads((job_dir / "plan.json").read_text())
        bench = next(p for p in plan["processes"] if p["name"] == "benchmark")
        assert bench["env"]["HF_HUB_OFFLINE"] == "1"  # the client reads what the step fetched
    step_log = (job2 / "logs" / "bench_tokenizer.out").read_text()
    assert f"is commit {commit}" in step_log and "from the cache (offline)" in step_log
    result = next((job1 / "logs").glob("sa-bench_isl_32_osl_8/results_concurrency_2_*.json"))
    assert json.loads(result.read_text())["tokenizer_id"] == f"hf:{HUB_ID}"


@pytest.mark.parametrize(
    ("model", "first_line", "fix", "cause"),
    [
        (
            "hf:Org/gated",
            "(HTTP 401, gated repository Org/gated)",
            "accept the license at",
            "gated_repo",
        ),
        (
            "hf:Org/missing",
            "(HTTP 404, repository Org/missing not found)",
            "check the id in model.path",
            "model_path_missing",
        ),
    ],
    ids=["gated-401", "missing-404"],
)
def test_a_refused_repo_fails_the_job_before_the_workers_with_the_diagnosis(
    tmp_path: Path, model: str, first_line: str, fix: str, cause: str
) -> None:
    with HubServer({"Org/gated": TINY}, gated={"Org/gated": "the-token"}) as hub:
        env = {"HF_ENDPOINT": hub.url, "HF_HOME": str(tmp_path / "hf")}
        done, job_dir = _apply(tmp_path / "out", model, env)
    assert done.returncode != 0
    status = _status(job_dir)
    assert status["status"] == "failed"
    output = done.stdout + done.stderr
    assert f"cannot fetch the tokenizer of {model} from the Hugging Face hub {first_line}" in (
        output
    ), output[-3000:]
    assert fix in output
    logs = job_dir / "logs"
    diagnosis = json.loads((logs / "diagnosis.json").read_text())
    assert "bench_tokenizer" in json.dumps(diagnosis)
    # the failure catalog names the cause (a provoked failure: issue 33)
    assert diagnosis["cause"] == cause, diagnosis
    assert f"  cause:  {cause}: " in output
    # no worker, frontend or benchmark was started: the job stopped at the step
    assert not list(logs.glob("*_agg_w*.out"))
    assert not (logs / "benchmark.out").exists()
