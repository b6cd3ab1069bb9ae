"""A capacity search against the test server's scripted latency curve
(`python -m srt_bench.testing --ttft-ms-per-stream ...`, srt_bench.testing.curve): the answer is
known in advance. The test checks the search's verdict against its own evidence (the capacity
meets every target, the next point up misses, they are within the tolerance) and that the answer
is at most the truth (the script is a floor: machine load only adds latency). How close to the
truth it lands and in how many points on this machine is benchmarks/capacity_live.py's (on
exact readings, benchmarks/capacity_search.py: within 5% in a median of 4 to 5 points, where the
1, 2, 4 ... 1,024 grid needs 11 and only brackets it within a factor of 2)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from srt_bench import BuildContext, build_plan, decode_run_config, run_plan
from srt_bench.plans import CapacityPlan
from srt_bench.testing import LatencyCurve

pytestmark = pytest.mark.slow

#: TTFT = 10 ms + 6 ms per stream in flight, ITL = 1 ms + 0.01 ms per stream: p99 TTFT <= 610 ms
#: holds up to 100 streams (ITL <= 12 ms up to 1,100: TTFT binds). 6 ms per stream keeps the
#: client's and the test server's own overhead within a stream or two even on a loaded machine
#: (3 ms per stream once needed a sixth point when tens of ms of scheduling delay hit the p99).
CURVE = LatencyCurve(ttft_ms=10.0, itl_ms=1.0, ttft_ms_per_stream=6.0, itl_ms_per_stream=0.01)
TTFT_LIMIT, ITL_LIMIT = 610.0, 12.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def curve_server() -> Iterator[str]:
    port = _free_port()
    argv = [sys.executable, "-m", "srt_bench.testing", "--port", str(port), "--tokens", "4"]
    argv += ["--honour-max-tokens", "--ttft-ms", str(CURVE.ttft_ms)]
    argv += ["--ttft-ms-per-stream", str(CURVE.ttft_ms_per_stream)]
    argv += ["--itl-ms", str(CURVE.itl_ms), "--itl-ms-per-stream", str(CURVE.itl_ms_per_stream)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=1):
                    break
            except OSError:
                assert proc.poll() is None, "the curve server exited"
                # hang guard: 60 s for a server that starts in about a second
                assert time.monotonic() < deadline, "the curve server did not start"
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _config(url: str, model: Path, out: Path, capacity: dict[str, Any]) -> Any:
    doc = {
        "benchmark": {
            "type": "sa-bench",
            "isl": 16,
            "osl": 4,
            "random_range_ratio": 1.0,
            # 8 rounds: 800 requests at 100 streams, enough for a two-sided p99 interval
            "num_prompts_mult": 8,
            "num_warmup_mult": 1,
            "reuse_http_connections": True,
            "capacity": capacity,
        },
        "endpoint": url,
        "model_name": "tiny",
        "tokenizer_path": str(model),
        "total_gpus": 1,
        "output_dir": str(out),
    }
    return decode_run_config(msgspec.json.encode(doc))


def test_the_search_brackets_the_scripted_capacity_and_shows_its_evidence(
    curve_server: str, tiny_model: Path, tmp_path: Path
) -> None:
    truth = CURVE.capacity(ttft_limit_ms=TTFT_LIMIT, itl_limit_ms=ITL_LIMIT)
    assert truth == 100
    targets = {"ttft_p99_ms": TTFT_LIMIT, "itl_p99_ms": ITL_LIMIT}
    config = _config(curve_server, tiny_model, tmp_path, {"targets": targets})
    plan = build_plan(config, BuildContext(out_dir=tmp_path))
    assert isinstance(plan, CapacityPlan)
    lines: list[str] = []
    assert run_plan(plan, config, tmp_path, log=lines.append, stop=threading.Event()) == 0
    rollup = json.loads((tmp_path / "benchmark-rollup.json").read_text())
    capacity = rollup["capacity"]
    measured = [p["concurrency"] for p in capacity["points"]]
    print(f"capacity {capacity['capacity']} (truth {truth}) from points {measured}")
    assert capacity["status"] == "found", (measured, capacity["stopped"])
    assert 1 <= capacity["capacity"] <= truth, measured
    assert len(measured) == len(set(measured)) <= 10, measured  # max_points
    # the verdict's evidence: the capacity meets every target, the next point up misses one,
    # and the two are within the search's 5% tolerance (or adjacent)
    by_c = {p["concurrency"]: p for p in capacity["points"]}
    assert all(r["meets"] for r in by_c[capacity["capacity"]]["readings"])
    lo, hi = capacity["capacity"], capacity["next_up"]
    assert hi - lo <= 1 or hi <= lo * 1.05, (lo, hi)
    # every point it measured is an ordinary run of the rollup, with its result file
    assert sorted(r["concurrency"] for r in rollup["runs"]) == sorted(measured)
    for point in capacity["points"]:
        assert (tmp_path / point["result_path"]).is_file()
        assert point["why"]
    # the next point up misses a target (TTFT by the script; ITL too if this machine is loaded)
    up = by_c[capacity["next_up"]]
    assert {r["target"] for r in up["readings"] if not r["meets"]} & {"ttft_p99_ms", "itl_p99_ms"}
    assert capacity["targets"] == [
        {"name": "ttft_p99_ms", "metric": "ttft", "percentile": 99.0, "limit_ms": 610.0},
        {"name": "itl_p99_ms", "metric": "itl", "percentile": 99.0, "limit_ms": 12.0},
    ]
    # the log says what was measured, why, and what was found
    text = "\n".join(lines)
    assert f"capacity: found: capacity {capacity['capacity']} ({len(measured)} points" in text
    assert "capacity: point 2: concurrency 8: one point so far" in text
    assert f"capacity: {capacity['statement']}" in text
    assert (
        f"capacity {capacity['capacity']} (next point up {capacity['next_up']} misses)"
        in (capacity["statement"])
    )
    assert "ttft_p99_ms" in capacity["statement"] and "95% CI" in capacity["statement"]


def test_an_unreachable_target_stops_at_the_first_point(
    curve_server: str, tiny_model: Path, tmp_path: Path
) -> None:
    config = _config(curve_server, tiny_model, tmp_path, {"targets": {"ttft_p50_ms": 5.0}})
    plan = build_plan(config, BuildContext(out_dir=tmp_path))
    assert run_plan(plan, config, tmp_path, log=lambda _l: None, stop=threading.Event()) == 0
    capacity = json.loads((tmp_path / "benchmark-rollup.json").read_text())["capacity"]
    assert (capacity["status"], capacity["capacity"]) == ("below_min", None)
    assert [p["concurrency"] for p in capacity["points"]] == [1]
