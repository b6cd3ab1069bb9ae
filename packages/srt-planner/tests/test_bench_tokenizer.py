"""The tokenizer the benchmark client is given in bench.json (``tokenizer_path``)."""

from __future__ import annotations

import json
from typing import Any

from srt_planner import plan_job
from srt_planner.benchmark import BENCH_CONFIG
from srt_schema import load_recipe_document
from srt_schema.cluster import ClusterConfig

CLUSTER = ClusterConfig(default_account="acct", default_partition="batch")


def _bench_json(model: str, **benchmark: Any) -> dict[str, Any]:
    doc = {
        "schema": 2,
        "name": "tok",
        "model": {"path": model, "container": "img.sqsh", "precision": "bf16"},
        "resources": {"gpus_per_node": 8},
        "engine": "sglang",
        "roles": {"agg": {"nodes": 1, "workers": 1}},
        "benchmark": {"type": "sa-bench", "isl": 8, "osl": 8, "concurrencies": [1], **benchmark},
    }
    (job,) = load_recipe_document(doc, file="r.yaml")  # validates: what srtctl validate accepts
    plan = plan_job(job.recipe, CLUSTER, "node1", "1")
    files = {f.path: f.content for f in plan.files}
    config: dict[str, Any] = json.loads(files[BENCH_CONFIG])
    return config


def test_custom_tokenizer_is_the_bench_tokenizer_of_a_hub_model() -> None:
    config = _bench_json("hf:Org/tiny-word", custom_tokenizer="/tokenizers/tiny-word")
    assert config["tokenizer_path"] == "/tokenizers/tiny-word"
    assert config["benchmark"]["custom_tokenizer"] == "/tokenizers/tiny-word"


def test_custom_tokenizer_wins_over_the_model_folder() -> None:
    config = _bench_json("/models/qwen3", custom_tokenizer="/tok/tokenizer.json")
    assert config["tokenizer_path"] == "/tok/tokenizer.json"


def test_without_custom_tokenizer_the_model_folder_is_the_tokenizer() -> None:
    assert _bench_json("/models/qwen3")["tokenizer_path"] == "/model"
