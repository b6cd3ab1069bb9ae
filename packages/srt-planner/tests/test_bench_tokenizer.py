"""The tokenizer the benchmark client is given in bench.json (``tokenizer_path``)."""

from __future__ import annotations

import json
from typing import Any

from srt_planner import plan_job
from srt_planner.benchmark import BENCH_CONFIG
from srt_planner.plan import StandIn
from srt_schema import load_recipe_document
from srt_schema.cluster import ClusterConfig

CLUSTER = ClusterConfig(default_account="acct", default_partition="batch")
_SA: dict[str, Any] = {"type": "sa-bench", "isl": 8, "osl": 8, "concurrencies": [1]}


def _bench_json(model: str, stand_in: StandIn | None = None, **benchmark: Any) -> dict[str, Any]:
    doc = {
        "schema": 2,
        "name": "tok",
        "model": {"path": model, "container": "img.sqsh", "precision": "bf16"},
        "resources": {"gpus_per_node": 8},
        "engine": "sglang",
        "roles": {"agg": {"nodes": 1, "workers": 1}},
        "benchmark": benchmark or {"type": "sa-bench", "isl": 8, "osl": 8, "concurrencies": [1]},
    }
    (job,) = load_recipe_document(doc, file="r.yaml")  # validates: what srtctl validate accepts
    plan = plan_job(job.recipe, CLUSTER, "node1", "1", stand_in=stand_in)
    files = {f.path: f.content for f in plan.files}
    config: dict[str, Any] = json.loads(files[BENCH_CONFIG])
    return config


def test_custom_tokenizer_is_the_bench_tokenizer_of_a_hub_model() -> None:
    config = _bench_json("hf:Org/tiny-word", **_SA, custom_tokenizer="/tokenizers/tiny-word")
    assert config["tokenizer_path"] == "/tokenizers/tiny-word"
    assert config["benchmark"]["custom_tokenizer"] == "/tokenizers/tiny-word"


def test_custom_tokenizer_wins_over_the_model_folder() -> None:
    config = _bench_json("/models/qwen3", **_SA, custom_tokenizer="/tok/tokenizer.json")
    assert config["tokenizer_path"] == "/tok/tokenizer.json"


def test_without_custom_tokenizer_the_model_folder_is_the_tokenizer() -> None:
    assert _bench_json("/models/qwen3")["tokenizer_path"] == "/model"


def test_with_stand_in_engines_an_aiperf_runner_counts_with_the_stand_in_model() -> None:
    """The stand-ins serve the stand-in model (the recipe's model is not here): aiperf loads its
    tokenizer (a type without custom_tokenizer, so `apply --stand-in-engines` sets none)."""
    stand_in = StandIn(model="/out/.stand-in-model")
    config = _bench_json("qwen3-32b", stand_in, type="mooncake-router")
    assert config["tokenizer_path"] == "/out/.stand-in-model"
    assert _bench_json("qwen3-32b", type="mooncake-router")["tokenizer_path"] == "/model"
