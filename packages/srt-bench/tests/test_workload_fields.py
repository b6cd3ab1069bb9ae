"""The recipe's `benchmark.workload` fields the other workload tests leave at their defaults
(`kv_block_tokens`, `conversations`, `max_requests`), each changing what a run against the
fixed-stream server sends or reports (docs/schema-extensions.md)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import msgspec

from srt_bench.config import decode_run_config
from srt_bench.execute import run_plan
from srt_bench.runners import BuildContext, build_plan
from srt_bench.testing import FixedStreamServer, ServerBehaviour


def _run(url: str, model: Path, out: Path, workload: dict[str, Any], **bench: Any) -> Any:
    benchmark: dict[str, Any] = {
        "type": "sa-bench",
        "osl": 6,
        "concurrencies": [2],
        "num_prompts_mult": 4,
        "num_warmup_mult": 1,
        "random_range_ratio": 1.0,
        "workload": workload,
        **bench,
    }
    doc = {
        "benchmark": benchmark,
        "endpoint": url,
        "model_name": "tiny",
        "tokenizer_path": str(model),
        "total_gpus": 1,
        "output_dir": str(out),
    }
    config = decode_run_config(msgspec.json.encode(doc))
    plan = build_plan(config, BuildContext(out_dir=out))
    assert run_plan(plan, config, out, log=lambda _l: None, stop=threading.Event()) == 0
    (path,) = out.glob("sa-bench_*/results_concurrency_2_gpus_1.json")
    result: dict[str, Any] = json.loads(path.read_text())
    return result


def _server() -> FixedStreamServer:
    return FixedStreamServer(ServerBehaviour(honour_max_tokens=True, count_prompt_tokens=True))


def test_kv_block_tokens_sets_the_block_the_hit_potential_counts(
    tiny_model: Path, tmp_path: Path
) -> None:
    shared = {"type": "shared-prefix", "groups": 1, "prefix_tokens": 30, "suffix_tokens": 8}
    with _server() as server:
        default = _run(server.url, tiny_model, tmp_path / "a", shared)
        small = _run(server.url, tiny_model, tmp_path / "b", {**shared, "kv_block_tokens": 5})
    # 8 requests share a 30-token prefix: 16-token blocks reuse 16 of it, 5-token blocks all 30
    assert default["workload"]["prefix_hit_tokens"] == 16 * 7
    assert small["workload"]["prefix_hit_tokens"] == 30 * 7
    assert small["workload"]["kv_block_tokens"] == 5


def test_conversations_sets_how_many_conversations_a_phase_runs(
    tiny_model: Path, tmp_path: Path
) -> None:
    turns = {"type": "multi-turn", "turns": 2, "conversations": 5}
    with _server() as server:
        r = _run(server.url, tiny_model, tmp_path, turns, isl=10)
    assert r["workload"]["conversations"] == 5 and r["completed"] == 5 * 2


def test_max_requests_replays_only_the_first_rows(tiny_model: Path, tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    rows = [
        {"timestamp": 10 * i, "input_length": 8, "output_length": 2, "hash_ids": [i]}
        for i in range(6)
    ]
    trace.write_text("".join(json.dumps(r) + "\n" for r in rows))
    replay = {"type": "trace-replay", "path": str(trace), "max_requests": 4}
    with _server() as server:
        r = _run(server.url, tiny_model, tmp_path / "out", replay, osl=None)
    assert r["workload"]["trace_rows"] == 4 and r["completed"] == 4
