"""End to end: `srt-bench run` (a real process) against the real Dynamo frontend + mocker
(ai-dynamo 1.6.1 from PyPI) on 127.0.0.1, checking token counts against the server's usage.

Two mockers share one frontend: `tiny` has a word-level tokenizer (one text delta per token, so
TTFT and ITL are measurable), `tiny-bpe` a byte-level BPE one (the mocker streams no text, only
usage: the known trap; latencies that need text must be reported as unmeasured). The workload
tests (multi-turn over chat, shared-prefix, trace replay) check that the client's prompt-token
count of every request equals the mocker's usage.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from srt_bench.prompts import read_tokenizer
from srt_bench.testing import write_tiny_model

pytestmark = pytest.mark.slow

START_TIMEOUT = 180.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _dynamo_env(kv_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DYN_FILE_KV=str(kv_dir),  # file-based discovery: no etcd, no NATS
        DYN_TCP_RPC_HOST="127.0.0.1",  # keep the request plane on loopback
        DYN_TCP_RESPONSE_STREAM_HOST="127.0.0.1",
        DYN_EVENT_PLANE_HOST="127.0.0.1",
        DYN_SYSTEM_HOST="127.0.0.1",
    )
    return env


def _tail(path: Path) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-20:]) if path.exists() else ""


class Deployment:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.models = {
            "tiny": write_tiny_model(root / "model-word"),
            "tiny-bpe": write_tiny_model(root / "model-bpe", kind="byte-bpe"),
        }
        self.procs: list[tuple[subprocess.Popen[bytes], Path]] = []

    def start(self, name: str, argv: list[str], env: dict[str, str]) -> None:
        log = self.root / f"{name}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env
            )
        self.procs.append((proc, log))

    def wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            for proc, log in self.procs:
                if proc.poll() is not None:
                    pytest.fail(f"{log.name} exited with {proc.returncode}:\n{_tail(log)}")
            try:
                ids = {
                    m["id"] for m in httpx.get(f"{self.url}/v1/models", timeout=2).json()["data"]
                }
            except (httpx.HTTPError, ValueError, KeyError):
                ids = set()
            if ids >= set(self.models):
                return
            time.sleep(0.5)
        logs = "\n".join(f"--- {log.name}\n{_tail(log)}" for _, log in self.procs)
        pytest.fail(f"frontend + mockers not ready within {START_TIMEOUT} s\n{logs}")

    def stop(self) -> None:
        for proc, _ in self.procs:
            proc.terminate()
        for proc, _ in self.procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)


@pytest.fixture(scope="module")
def dynamo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    root = tmp_path_factory.mktemp("dynamo")
    env = _dynamo_env(root / "kv")
    d = Deployment(root)
    common = ["--discovery-backend", "file", "--request-plane", "tcp"]
    d.start(
        "frontend",
        [sys.executable, "-m", "dynamo.frontend", "--http-host", "127.0.0.1",
         "--http-port", str(d.port), *common],
        env,
    )  # fmt: skip
    for name, folder in d.models.items():
        d.start(
            f"mocker-{name}",
            [sys.executable, "-m", "dynamo.mocker", "--model-path", str(folder),
             "--model-name", name, "--speedup-ratio", "0",
             # one endpoint per model: two models on one endpoint make a mocker exit at once
             "--endpoint", f"dyn://dynamo.{name.replace('-', '')}.generate", *common],
            env,
        )  # fmt: skip
    try:
        d.wait_ready()
        yield d
    finally:
        d.stop()


def _run_bench(
    d: Deployment, model: str, out: Path, **bench: Any
) -> subprocess.CompletedProcess[str]:
    benchmark: dict[str, Any] = {
        "type": "sa-bench",
        "isl": 24,
        "osl": 12,
        "random_range_ratio": 1.0,
        "concurrencies": [1, 4],
        "num_prompts_mult": 4,
        "num_warmup_mult": 1,
    }
    benchmark.update(bench)
    config = {
        "benchmark": benchmark,
        "endpoint": "http://127.0.0.1:1",  # replaced by --endpoint below
        "model_name": model,
        "tokenizer_path": str(d.models[model]),
        "total_gpus": 2,
        "job_name": f"e2e-{model}",
    }
    path = out / "bench.json"
    out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config))
    return subprocess.run(
        [sys.executable, "-m", "srt_bench", "run", "--config", str(path),
         "--endpoint", d.url, "--out", str(out)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def _results(out: Path, c: int) -> dict[str, Any]:
    return json.loads(
        (out / "sa-bench_isl_24_osl_12" / f"results_concurrency_{c}_gpus_2.json").read_text()
    )


def test_token_counts_match_the_servers_usage_and_itl_is_measured(
    dynamo: Deployment, tmp_path: Path
) -> None:
    proc = _run_bench(dynamo, "tiny", tmp_path, use_chat_template=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tokenizer = read_tokenizer(dynamo.models["tiny"])
    for c, n in ((1, 4), (4, 16)):
        r = _results(tmp_path, c)
        assert r["completed"] == n and r["failed"] == 0
        assert r["output_token_sources"] == {"usage": n}
        # the server counted exactly the prompt tokens we generated, and produced exactly osl
        assert r["input_lens"] == [24] * n
        assert r["output_lens"] == [12] * n
        # our own tokenization of the streamed text agrees with the server's usage
        for text, usage in zip(r["generated_texts"], r["output_lens"], strict=True):
            assert len(tokenizer.encode(text, add_special_tokens=False).ids) == usage
        # one text delta per token, grouped by arrival: ITL is one gap per chunk after the first
        assert [sum(tokens) for tokens in r["chunk_tokens"]] == [12] * n
        assert [len(itl) for itl in r["itls"]] == [len(t) - 1 for t in r["chunk_tokens"]]
        assert all(gap > 0 for itl in r["itls"] for gap in itl)
        assert r["unmeasured_metrics"] == {}
        assert r["mean_ttft_ms"] > 0 and r["p99_itl_ms"] > 0 and r["median_tpot_ms"] > 0
        assert r["total_output_tokens"] == 12 * n
    rollup = json.loads((tmp_path / "benchmark-rollup.json").read_text())
    assert [run["completed_requests"] for run in rollup["runs"]] == [4, 16]
    assert (
        (tmp_path / "benchmark-rollup.csv")
        .read_text()
        .splitlines()[1]
        .startswith("e2e-tiny,2,2,2,2,0,1,")
    )


def test_tokens_only_in_usage_are_counted_and_latencies_reported_as_unmeasured(
    dynamo: Deployment, tmp_path: Path
) -> None:
    proc = _run_bench(dynamo, "tiny-bpe", tmp_path, concurrencies=[4])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    r = _results(tmp_path, 4)
    assert r["completed"] == 16
    assert r["output_lens"] == [12] * 16
    assert r["input_lens"] == [24] * 16
    assert r["output_token_sources"] == {"usage": 16}
    assert r["generated_texts"] == [""] * 16
    assert r["mean_ttft_ms"] is None and r["mean_itl_ms"] is None and r["mean_tpot_ms"] is None
    assert set(r["unmeasured_metrics"]) == {"ttft", "itl", "tpot"}
    assert r["mean_e2el_ms"] > 0
    assert "ttft n/a: no response carried generated text" in proc.stdout


def test_a_wrong_model_name_fails_the_sanity_request(dynamo: Deployment, tmp_path: Path) -> None:
    d = dynamo
    d.models["nope"] = d.models["tiny"]
    try:
        proc = _run_bench(d, "nope", tmp_path)
    finally:
        del d.models["nope"]
    assert proc.returncode == 1
    assert "the sanity request to" in proc.stderr and "failed: HTTP 404" in proc.stderr


# -- workloads: token counts equal the server's usage --------------------------------------------
def _run_workload(
    d: Deployment, out: Path, workload: dict[str, Any], **bench: Any
) -> dict[str, Any]:
    benchmark: dict[str, Any] = {
        "type": "sa-bench",
        "isl": 24,
        "osl": 12,
        "random_range_ratio": 1.0,
        "concurrencies": [4],
        "num_prompts_mult": 3,
        "num_warmup_mult": 1,
    }
    benchmark.update(bench, workload=workload)
    config = {
        "benchmark": benchmark,
        "endpoint": d.url,
        "model_name": "tiny",
        "tokenizer_path": str(d.models["tiny"]),
        "total_gpus": 2,
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench.json").write_text(json.dumps(config))
    proc = subprocess.run(
        [sys.executable, "-m", "srt_bench", "run", "--config", str(out / "bench.json"),
         "--out", str(out)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (path,) = out.glob("sa-bench_*/results_concurrency_4_gpus_2.json")
    doc: dict[str, Any] = json.loads(path.read_text())
    assert doc["failed"] == 0
    assert doc["output_token_sources"] == {"usage": doc["completed"]}
    w = doc["workload"]
    # the server's usage counted exactly the prompt tokens the client built, request by request
    assert w["prompt_token_mismatches"] == 0
    assert w["client_prompt_tokens"] == w["server_prompt_tokens"] == sum(doc["input_lens"])
    return doc


def test_multi_turn_prompt_tokens_equal_the_mockers_usage(
    dynamo: Deployment, tmp_path: Path
) -> None:
    doc = _run_workload(dynamo, tmp_path, {"type": "multi-turn", "turns": 3, "think_time_s": 0.01})
    n = 4 * 3  # ceil(4 * 3 / 3) = 4 conversations x 3 turns
    assert doc["completed"] == n
    # turn k: k + 1 user texts of 24 tokens and k answers of 12 (the mocker's own text)
    assert doc["input_lens"] == [24, 60, 96] * 4
    assert doc["output_lens"] == [12] * n
    assert doc["workload"]["prefix_hit_tokens"] == 4 * (16 + 48)


def test_shared_prefix_prompt_tokens_equal_the_mockers_usage(
    dynamo: Deployment, tmp_path: Path
) -> None:
    workload = {"type": "shared-prefix", "groups": 2, "prefix_tokens": 48, "suffix_tokens": 16}
    doc = _run_workload(dynamo, tmp_path, workload)
    assert doc["input_lens"] == [64] * 12 and doc["output_lens"] == [12] * 12
    # 12 requests over 2 groups: at least 10 reuse their group's 48-token prefix
    assert doc["workload"]["prefix_hit_tokens"] >= 48 * 10


def test_trace_replay_prompt_tokens_equal_the_mockers_usage(
    dynamo: Deployment, tmp_path: Path
) -> None:
    rows = [
        {"timestamp": 0, "input_length": 600, "output_length": 8, "hash_ids": [1, 2]},
        {"timestamp": 50, "input_length": 512, "output_length": 6, "hash_ids": [1]},
        {"timestamp": 100, "input_length": 700, "output_length": 4, "hash_ids": [1, 3]},
        {"timestamp": 150, "input_length": 100, "output_length": 5, "hash_ids": [4]},
    ]
    trace = tmp_path / "trace.jsonl"
    trace.write_text("".join(json.dumps(r) + "\n" for r in rows))
    doc = _run_workload(dynamo, tmp_path / "out", {"type": "trace-replay", "path": str(trace)})
    assert doc["input_lens"] == [600, 512, 700, 100]
    assert doc["output_lens"] == [8, 6, 4, 5]
    assert doc["workload"]["prefix_hit_tokens"] == 512 + 512
