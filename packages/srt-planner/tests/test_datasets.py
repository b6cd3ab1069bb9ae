"""What bench.json tells the benchmark step to download (srt_planner.datasets): the published
Mooncake trace, or the URL the job's environment or the recipe gives, into the shared cache."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from srt_bench.config import decode_run_config
from srt_planner import PlannerError, plan_job
from srt_planner.benchmark import BENCH_CONFIG
from srt_planner.datasets import build_dataset_settings
from srt_schema import load_recipe_document
from srt_schema.cluster import ClusterConfig

CLUSTER = ClusterConfig(default_account="acct", default_partition="batch")
PUBLISHED = "https://raw.githubusercontent.com/kvcache-ai/Mooncake/main/FAST25-release"


def _fetch(
    benchmark: dict[str, Any],
    environ: dict[str, str] | None = None,
    environment: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    doc = {
        "schema": 2,
        "name": "trace",
        "model": {"path": "/models/qwen3", "container": "img.sqsh", "precision": "bf16"},
        "resources": {"gpus_per_node": 8},
        "engine": "sglang",
        "roles": {"agg": {"nodes": 1, "workers": 1}},
        "frontend": {"type": "dynamo"},
        "benchmark": benchmark,
        "environment": environment or {},
    }
    (job,) = load_recipe_document(doc, file="r.yaml")
    settings = build_dataset_settings(environ or {})
    plan = plan_job(job.recipe, CLUSTER, ["node-01"], "1", datasets=settings)
    text = {f.path: f.content for f in plan.files}[BENCH_CONFIG]
    decode_run_config(text.encode())  # what srt-bench reads
    fetch: list[dict[str, Any]] = json.loads(text).get("fetch", [])
    return fetch


def _key(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()[:16]


def test_mooncake_router_without_a_path_downloads_the_published_trace() -> None:
    [fetch] = _fetch({"type": "mooncake-router"}, {"HOME": "/home/u", "PATH": "/bin"})
    url = f"{PUBLISHED}/traces/conversation_trace.jsonl"
    assert fetch == {
        "field": "dataset_path",
        "what": "the mooncake-router trace",
        "url": url,
        "cache_file": f"/home/u/.cache/huggingface/datasets/srt-downloads/{_key(url)}/"
        "conversation_trace.jsonl",
        "sha256": None,
        "source": "the published conversation trace",
    }
    [arxiv] = _fetch({"type": "mooncake-router", "mooncake_workload": "mooncake"})
    assert arxiv["url"] == f"{PUBLISHED}/arxiv-trace/mooncake_trace.jsonl"
    assert arxiv["cache_file"].startswith("~/.cache/huggingface/datasets/srt-downloads/")


@pytest.mark.parametrize(
    ("environ", "environment", "folder"),
    [
        ({"SRT_DATASETS_CACHE": "/shared/c", "HF_HOME": "/hf"}, {}, "/shared/c"),
        ({"HF_DATASETS_CACHE": "/hfd", "HF_HOME": "/hf"}, {}, "/hfd"),
        ({"HF_HOME": "/hf/"}, {}, "/hf/datasets"),
        # the recipe's environment is the job's: it wins
        ({"SRT_DATASETS_CACHE": "/shared/c"}, {"SRT_DATASETS_CACHE": "/lustre/c"}, "/lustre/c"),
    ],
)
def test_the_cache_folder_follows_the_environment(
    environ: dict[str, str], environment: dict[str, str], folder: str
) -> None:
    [fetch] = _fetch({"type": "mooncake-router"}, environ, environment)
    assert fetch["cache_file"].startswith(f"{folder}/srt-downloads/")


def test_the_trace_url_can_point_at_a_mirror_or_a_copy() -> None:
    [mirror] = _fetch(
        {"type": "mooncake-router", "mooncake_workload": "toolagent"},
        {"SRT_DATASETS_MIRROR": "http://127.0.0.1:8080/"},
    )
    assert mirror["url"] == (
        "http://127.0.0.1:8080/raw.githubusercontent.com/kvcache-ai/Mooncake/main/"
        "FAST25-release/traces/toolagent_trace.jsonl"
    )
    assert mirror["source"] == "$SRT_DATASETS_MIRROR"
    [copy] = _fetch(
        {"type": "mooncake-router", "mooncake_workload": "synthetic"},
        {"SRT_MOONCAKE_TRACE_URL": "http://m/{workload}.jsonl", "SRT_DATASETS_MIRROR": "http://x"},
    )
    assert (copy["url"], copy["source"]) == ("http://m/synthetic.jsonl", "$SRT_MOONCAKE_TRACE_URL")


def test_a_url_in_the_recipe_is_fetched_with_its_pin_and_a_path_is_not() -> None:
    pin = "ab" * 32
    [fetch] = _fetch(
        {"type": "mooncake-router", "dataset_path": f"https://h/a/t.jsonl#sha256={pin}"}
    )
    assert (fetch["url"], fetch["sha256"], fetch["source"]) == (
        "https://h/a/t.jsonl",
        pin,
        "benchmark.dataset_path",
    )
    assert _fetch({"type": "mooncake-router", "dataset_path": "/d/t.jsonl"}) == []
    [replay] = _fetch(
        {"type": "trace-replay", "trace_file": "http://h/r.jsonl", "concurrencies": [2]}
    )
    assert (replay["field"], replay["url"]) == ("trace_file", "http://h/r.jsonl")
    assert _fetch({"type": "trace-replay", "trace_file": "/d/r.jsonl", "concurrencies": [2]}) == []


def test_a_malformed_pin_in_the_environment_is_refused_when_planning() -> None:
    with pytest.raises(PlannerError, match=r"\$SRT_MOONCAKE_TRACE_URL: .*#sha256=xyz is not"):
        _fetch({"type": "mooncake-router"}, {"SRT_MOONCAKE_TRACE_URL": "http://m/t#sha256=xyz"})
