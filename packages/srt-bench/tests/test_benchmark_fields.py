"""Benchmark fields change what the client does: the requests it sends, the argv it runs.

``docs/schema-ledger.md`` cites these for fields no plan diff can show (the planner copies the
benchmark block into bench.json; only the client gives the values an effect).
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_fakes.chat_server import chat_server

from srt_bench.config import BenchRunConfig, decode_run_config
from srt_bench.execute import run_plan
from srt_bench.plans import CommandPlan
from srt_bench.runners import BuildContext, build_plan

DATA = Path(__file__).resolve().parent / "data"


def _config(endpoint: str, frontend_type: str | None = None, **bench: Any) -> BenchRunConfig:
    doc = {
        "benchmark": bench,
        "endpoint": endpoint,
        "model_name": "m",
        "tokenizer_path": "/models/m",
        "total_gpus": 1,
        "datasets_dir": str(DATA),
        "frontend_type": frontend_type,
    }
    return decode_run_config(msgspec.json.encode(doc))


def _gsm8k_bodies(tmp_path: Path, **bench: Any) -> list[dict[str, Any]]:
    bodies: list[dict[str, Any]] = []
    with chat_server({"Tom has 40 apples": "#### 42"}, bodies) as (url, _prompts):
        config = _config(url, type="gsm8k", num_shots=0, **bench)
        plan = build_plan(config, BuildContext(out_dir=tmp_path))
        assert run_plan(plan, config, tmp_path, log=lambda _l: None, stop=threading.Event()) == 0
    report = json.loads((tmp_path / "accuracy" / "gsm8k_m.json").read_text())
    assert report["attempts"] == len(bodies) > 0
    return bodies


def test_gsm8k_sends_the_recipes_sampling_fields(tmp_path: Path) -> None:
    bodies = _gsm8k_bodies(tmp_path / "set", temperature=0.7, top_p=0.9, top_k=20)
    assert {(b["temperature"], b["top_p"], b["top_k"]) for b in bodies} == {(0.7, 0.9, 20)}
    # Unset: greedy, and the server's own top_p / top_k.
    bodies = _gsm8k_bodies(tmp_path / "unset")
    assert {b["temperature"] for b in bodies} == {0.0}
    assert not any("top_p" in b or "top_k" in b for b in bodies)


def _argv(config: BenchRunConfig) -> tuple[str, ...]:
    plan = build_plan(config, BuildContext(out_dir=Path("/logs"), environ={}))
    assert isinstance(plan, CommandPlan)
    return plan.commands[-1].argv


def _after(argv: tuple[str, ...], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def test_router_sends_num_requests_at_the_concurrency() -> None:
    url = "http://10.0.0.1:8000"
    argv = _argv(_config(url, "sglang-router", type="router", num_requests=50, concurrency=7))
    assert (_after(argv, "--request-count"), _after(argv, "--concurrency")) == ("50", "7")
    argv = _argv(_config(url, "sglang-router", type="router"))
    assert (_after(argv, "--request-count"), _after(argv, "--concurrency")) == ("200", "20")


def test_trace_replay_goodput_uses_itl_threshold_ms() -> None:
    base = {"type": "trace-replay", "trace_file": "/t.jsonl", "concurrencies": [2]}
    argv = _argv(_config("http://h:8000", **base, itl_threshold_ms=40))
    assert _after(argv, "--goodput").endswith(" inter_token_latency:40")
    argv = _argv(_config("http://h:8000", **base))
    assert not _after(argv, "--goodput").endswith(" inter_token_latency:40")
