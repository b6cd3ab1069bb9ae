"""Public recipes with stand-in engines on the slurm-lab cluster: real sbatch and srun, every
process of the recipe's plan on its own node (network namespace), only the GPU engines replaced
(``srtctl apply --stand-in-engines``). One recipe with a router frontend, one disaggregated, one
with nginx fan-out over several frontends; each with the corpus-run tier's short benchmark."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.corpus


def _runner() -> Any:
    spec = importlib.util.spec_from_file_location("corpus_run", REPO / "benchmarks/corpus_run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("corpus_run", module)
    spec.loader.exec_module(module)
    return module


RUNNER = _runner()
#: (case, what it shows): each needs at most the lab's 3 nodes x 4 GPUs.
RECIPES = {
    "router": "NVIDIA/srt-slurm/recipes/gb200-fp4/1k1k-dsv4/agg-2n-low-latency.yaml",
    "disagg": "NVIDIA/srt-slurm/examples/example.yaml",
    "nginx": "NVIDIA/srt-slurm/recipes/gb200-fp4/1k8k/low-latency.yaml",
}


def _submit(srt: Any, tmp_path: Path, rel: str) -> tuple[Any, dict[str, Any]]:
    (case,) = RUNNER.file_cases(RUNNER.CORPUS, "v1", rel, srt.output_dir)[:1]
    assert case.document is not None, case.load_error
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(yaml.safe_dump(RUNNER.tier_document(case.document), sort_keys=False))
    # The recipe's own partition is its site's; the lab's default partition stands in.
    job = srt.apply_one(recipe, "--stand-in-engines", "--unset", "slurm.partition")
    status = srt.wait(job, timeout=180)
    assert (status["status"], status["exit_code"]) == ("completed", 0), status
    plan = json.loads((job.job_dir / "plan.json").read_text())
    assert plan["stand_in"] is not None and plan["launcher"] == "slurm"
    rollup = json.loads((job.job_dir / "logs" / "benchmark-rollup.json").read_text())
    runs = {run["concurrency"]: run for run in rollup["runs"]}
    assert sorted(runs) == RUNNER.CONCURRENCIES
    assert all(run["total_output_tokens"] > 0 for run in runs.values())
    return job, plan


def _by_kind(plan: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [p for p in plan["processes"] if p["kind"] == kind]


def test_a_router_recipe_runs_behind_the_real_sglang_router(srt, tmp_path) -> None:
    job, plan = _submit(srt, tmp_path, RECIPES["router"])
    workers = _by_kind(plan, "worker")
    assert {w["nodes"][0] for w in workers} == {"node1", "node2"}
    # one 2-node TP worker: its leader is the stand-in server, its follower rank waits
    assert [w["argv"][1:3] for w in workers if w["argv"][0] != "sleep"] == [
        ["-m", "srt_runtime.standin"]
    ]
    assert all("sglang.launch_server" in " ".join(w["stand_in_for"]) for w in workers)
    routers = [p for p in _by_kind(plan, "frontend") if p["role"] == "sglang-router"]
    assert routers and routers[0]["argv"][1:3] == ["-m", "sglang_router.launch_router"]
    assert plan["health"]["family"] == "router"
    logs = job.job_dir / "logs"
    assert any(logs.glob("*sglang-router*.out"))


def test_a_disaggregated_recipe_runs_with_mockers_on_two_nodes(srt, tmp_path) -> None:
    job, plan = _submit(srt, tmp_path, RECIPES["disagg"])
    workers = _by_kind(plan, "worker")
    roles = {w["role"] for w in workers}
    assert roles == {"prefill", "decode"}
    assert len({n for w in workers for n in w["nodes"]}) == 2
    served = [w for w in workers if w["argv"][1:3] == ["-m", "dynamo.mocker"]]
    assert {w["role"] for w in served} == {"prefill", "decode"}
    assert plan["health"]["expected_prefill"] >= 1 and plan["health"]["expected_decode"] >= 1
    # discovery over the real etcd of the plan (not the local launcher's files)
    assert any(p["name"] == "service_etcd" for p in plan["processes"])
    assert "ETCD_ENDPOINTS" in served[0]["env"]
    for worker in served:  # every mocker ran on its node and logged there
        assert (job.job_dir / "logs" / worker["log_file"]).stat().st_size > 0, worker["name"]


def test_several_frontends_behind_nginx_with_stand_in_engines(srt, tmp_path) -> None:
    job, plan = _submit(srt, tmp_path, RECIPES["nginx"])
    frontends = _by_kind(plan, "frontend")
    (proxy,) = _by_kind(plan, "proxy")
    # the recipe asks for 1 + 3 frontends: all are placed, round-robin, each node/port its own
    # (docs/deviations.md D31: the reference capped them at the nodes besides the head)
    assert len(frontends) == 4 and len({f["nodes"][0] for f in frontends}) >= 2
    assert len({(f["nodes"][0], f["ports"]["http"]) for f in frontends}) == 4
    assert plan["frontend_url"].endswith(":8000") and proxy["nodes"] == [plan["nodes"][0]]
    # nginx fans the benchmark out to both Dynamo frontends, each on its own node
    conf = (job.job_dir / "logs" / "nginx.conf").read_text()
    for frontend in frontends:
        assert f"server {frontend['nodes'][0]}:{frontend['ports']['http']};" in conf
        assert (job.job_dir / "logs" / frontend["log_file"]).stat().st_size > 0
    assert len({n for w in _by_kind(plan, "worker") for n in w["nodes"]}) == 3
