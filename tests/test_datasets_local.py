"""A trace fetched in the job (docs/telemetry-and-bench.md#datasets-fetched-in-the-job), in real
local jobs: `srtctl apply --local` of the quickstart (two Dynamo mocker workers behind the real
Dynamo frontend) with `benchmark.type: mooncake-router` and no `dataset_path`, aiperf 0.13 run
through uvx. The trace URL points (`$SRT_MOONCAKE_TRACE_URL`) at a static HTTP server on
127.0.0.1 serving a trace this test writes; nothing leaves this machine.

Jobs bind the quickstart's fixed ports: run under `flock /tmp/srt-jobs.lock`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from srt_bench.testing import TINY_TRACE_ROWS, StaticFileServer, write_tiny_trace

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "examples" / "quickstart.yaml"
AIPERF = "aiperf==0.13.0"
REQUIRED = os.environ.get("CI", "").lower() in ("1", "true", "yes")

pytestmark = pytest.mark.slow


def _uvx() -> None:
    if shutil.which("uvx") is None:
        (pytest.fail if REQUIRED else pytest.skip)("datasets tier: uvx is not on PATH")


def _apply(out: Path, env: dict[str, str]) -> tuple[int, Path, str]:
    srtctl = shutil.which("srtctl")
    assert srtctl is not None, "srtctl is not installed in this environment (make sync)"
    argv = [srtctl, "apply", "--local", "-f", str(QUICKSTART), "-o", str(out)]
    argv += ["--unset", "benchmark.isl", "--unset", "benchmark.osl"]
    argv += ["--unset", "benchmark.concurrencies"]
    argv += [
        "--set",
        "benchmark.type=mooncake-router",
        "--set",
        f"benchmark.aiperf_package={AIPERF}",
    ]
    done = subprocess.run(
        argv,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=420,  # hang guard
        check=False,
        env={**os.environ, **env},
    )
    [job_dir] = [p for p in out.iterdir() if p.is_dir() and p.name.startswith("local-")]
    return done.returncode, job_dir, done.stdout + done.stderr


def _lock(job_dir: Path) -> dict[str, Any]:
    lock: dict[str, Any] = yaml.safe_load((job_dir / "recipe.lock.yaml").read_text())["lock"]
    return lock


def test_the_trace_is_fetched_once_into_the_cache_and_reused_without_the_server(
    tmp_path: Path,
) -> None:
    _uvx()
    data = write_tiny_trace(tmp_path / "www" / "conversation_trace.jsonl")
    sha = hashlib.sha256(data).hexdigest()
    cache = tmp_path / "cache"
    with StaticFileServer(tmp_path / "www") as server:
        url = f"{server.url}/conversation_trace.jsonl"
        env = {
            "SRT_MOONCAKE_TRACE_URL": f"{server.url}/{{workload}}_trace.jsonl",
            "SRT_DATASETS_CACHE": str(cache),
        }
        code, first, output = _apply(tmp_path / "first", env)
        assert code == 0, output[-4000:]
        assert server.requested == ["/conversation_trace.jsonl"]
    # the plan carries the download; the job read nothing else
    bench = json.loads((first / "logs" / "bench.json").read_text())
    [fetch] = bench["fetch"]
    assert (fetch["url"], fetch["field"]) == (url, "dataset_path")
    cached = Path(fetch["cache_file"])
    assert cached.is_relative_to(cache / "srt-downloads") and cached.read_bytes() == data
    rollup = json.loads((first / "logs" / "benchmark-rollup.json").read_text())
    # every row of the served trace
    assert rollup["data"]["request_count"]["avg"] == len(TINY_TRACE_ROWS)
    [entry] = _lock(first)["datasets"]
    assert (entry["url"], entry["sha256"], entry["origin"], entry["path"]) == (
        url,
        sha,
        "downloaded",
        str(cached),
    )
    assert entry["pinned_url"] == f"{url}#sha256={sha}"
    # the server is gone: a second job finds the trace in the cache
    code, second, output = _apply(tmp_path / "second", env)
    assert code == 0, output[-4000:]
    [entry] = _lock(second)["datasets"]
    assert (entry["sha256"], entry["origin"]) == (sha, "cache")
    assert "from the cache" in (second / "logs" / "benchmark.out").read_text()
    rollup = json.loads((second / "logs" / "benchmark-rollup.json").read_text())
    assert rollup["data"]["request_count"]["avg"] == len(TINY_TRACE_ROWS)


def test_a_trace_url_that_is_not_there_fails_the_benchmark_step_with_a_diagnosis(
    tmp_path: Path,
) -> None:
    _uvx()
    (tmp_path / "www").mkdir()
    with StaticFileServer(tmp_path / "www") as server:
        env = {
            "SRT_MOONCAKE_TRACE_URL": f"{server.url}/{{workload}}_trace.jsonl",
            "SRT_DATASETS_CACHE": str(tmp_path / "cache"),
        }
        code, job_dir, output = _apply(tmp_path / "out", env)
    assert code == 4, output[-4000:]  # a local run that failed
    status = json.loads((job_dir / "status.json").read_text())
    assert status["status"] == "failed"
    # the diagnosis the job ends with names the step, the URL, the status and the way out
    url = f"{server.url}/conversation_trace.jsonl"
    for line in (
        f"  url:    {url}",
        "  result: HTTP 404 File not found",
        "set benchmark.dataset_path to its path inside the container",
    ):
        assert line in output, output[-4000:]
    assert "benchmark" in status.get("message", "") or "benchmark" in output
    assert "datasets" not in _lock(job_dir)
