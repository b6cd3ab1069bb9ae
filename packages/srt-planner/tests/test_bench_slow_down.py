"""SGLang ``/slow_down`` targets in bench.json: every decode leader's HTTP server."""

from __future__ import annotations

import json
from typing import Any

from srt_planner import plan_job
from srt_planner.benchmark import BENCH_CONFIG
from srt_schema import load_recipe_document
from srt_schema.cluster import ClusterConfig

CLUSTER = ClusterConfig(default_account="acct", default_partition="batch")


NODES = ["node-01", "node-02", "node-03"]
ADDRESSES = {n: f"10.0.0.{i}" for i, n in enumerate(NODES, start=1)}


def _plan(**benchmark: Any) -> tuple[dict[str, Any], Any]:
    doc = {
        "schema": 2,
        "name": "slow",
        "model": {"path": "/models/qwen3", "container": "img.sqsh", "precision": "bf16"},
        "resources": {"gpus_per_node": 8},
        "engine": "sglang",
        "roles": {
            "prefill": {"nodes": 1, "workers": 1},
            "decode": {"nodes": 2, "workers": 2},
        },
        "frontend": {"type": "sglang-router"},
        "benchmark": {"type": "sa-bench", "isl": 8, "osl": 8, "concurrencies": [1], **benchmark},
    }
    (job,) = load_recipe_document(doc, file="r.yaml")
    plan = plan_job(job.recipe, CLUSTER, NODES, "1", addresses=ADDRESSES)
    files = {f.path: f.content for f in plan.files}
    return json.loads(files[BENCH_CONFIG]), plan


def test_slow_down_is_sent_to_every_decode_leader() -> None:
    config, plan = _plan(slow_down_sleep_time=0.5, slow_down_wait_time=60)
    decode = [
        p for p in plan.processes if p.kind == "worker" and p.role == "decode" and "http" in p.ports
    ]
    want = [f"http://{ADDRESSES[p.nodes[0]]}:{p.ports['http']}" for p in decode]
    assert len(want) == 2
    assert config["slow_down_urls"] == want
    assert config["frontend_type"] == "sglang-router"


def test_no_slow_down_no_targets() -> None:
    config, _ = _plan()
    assert "slow_down_urls" not in config
