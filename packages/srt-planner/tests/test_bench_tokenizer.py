"""The tokenizer the benchmark client is given in bench.json (``tokenizer_path``)."""

from __future__ import annotations

import json
from typing import Any

from srt_planner import plan_job
from srt_planner.benchmark import BENCH_CONFIG, TOKENIZER_STEP
from srt_planner.plan import JobPlan, StandIn
from srt_schema import load_recipe_document
from srt_schema.cluster import ClusterConfig

CLUSTER = ClusterConfig(default_account="acct", default_partition="batch")
_SA: dict[str, Any] = {"type": "sa-bench", "isl": 8, "osl": 8, "concurrencies": [1]}


def _plan(model: str, stand_in: StandIn | None = None, **benchmark: Any) -> JobPlan:
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
    return plan_job(job.recipe, CLUSTER, "node1", "1", stand_in=stand_in)


def _bench_json(model: str, stand_in: StandIn | None = None, **benchmark: Any) -> dict[str, Any]:
    files = {f.path: f.content for f in _plan(model, stand_in, **benchmark).files}
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


def test_with_stand_in_engines_an_aiperf_runner_may_count_with_the_stand_in_model() -> None:
    """The stand-ins serve the stand-in model, and a corpus recipe's model folder is not here:
    bench.json names the stand-in model as the fallback srt-bench takes when the folder is
    missing (a type without custom_tokenizer, so `apply --stand-in-engines` sets none)."""
    stand_in = StandIn(model="/out/.stand-in-model")
    config = _bench_json("qwen3-32b", stand_in, type="mooncake-router")
    assert config["tokenizer_path"] == "/model"  # the model folder, as the nodes mount it
    assert config["stand_in_tokenizer"] == "/out/.stand-in-model"
    real = _bench_json("qwen3-32b", type="mooncake-router")
    assert real["tokenizer_path"] == "/model" and "stand_in_tokenizer" not in real
    # sa-bench gets the stand-in model as custom_tokenizer at load instead; a hub model's
    # tokenizer still comes from the hub (the corpus tier's double serves it)
    hub = _bench_json("hf:Org/tiny-word", stand_in, **_SA)
    assert hub["tokenizer_path"] == "hf:Org/tiny-word" and "stand_in_tokenizer" not in hub


def test_an_aiperf_runner_of_a_hub_model_gets_the_repository_id() -> None:
    config = _bench_json("hf:Org/tiny-word", type="mooncake-router")
    assert config["tokenizer_path"] == "Org/tiny-word"


def test_an_hf_model_is_the_bench_tokenizer_loaded_before_the_workers() -> None:
    plan = _plan("hf:Org/tiny-word", **_SA, custom_tokenizer=None)
    config = json.loads({f.path: f.content for f in plan.files}[BENCH_CONFIG])
    assert config["tokenizer_path"] == "hf:Org/tiny-word"
    by_name = {p.name: p for p in plan.processes}
    step, bench = by_name[TOKENIZER_STEP], by_name["benchmark"]
    assert step.phase == "model_staging" and step.oneshot and step.critical
    assert step.argv[:2] == ("srt-bench", "tokenizer") and "hf_model.json" in step.argv[-1]
    assert step.nodes == bench.nodes and step.container == bench.container
    assert "HF_HUB_OFFLINE" not in step.env  # the step fetches ...
    assert bench.env["HF_HUB_OFFLINE"] == "1"  # ... the client reads the cache
    assert "HF_HUB_OFFLINE=1" in " ".join(bench.srun_argv)


def test_a_tokenizer_class_is_built_from_the_model_folder_in_a_step_before_the_workers() -> None:
    plan = _plan("/models/qwen3", **_SA, custom_tokenizer="my_tokenizers.word.WordTokenizer")
    config = json.loads({f.path: f.content for f in plan.files}[BENCH_CONFIG])
    assert config["tokenizer_path"] == "/model"
    assert config["benchmark"]["custom_tokenizer"] == "my_tokenizers.word.WordTokenizer"
    by_name = {p.name: p for p in plan.processes}
    assert by_name[TOKENIZER_STEP].phase == "model_staging"
    assert "HF_HUB_OFFLINE" not in by_name["benchmark"].env


def test_a_local_tokenizer_needs_no_step() -> None:
    plan = _plan("/models/qwen3")
    assert TOKENIZER_STEP not in {p.name for p in plan.processes}
