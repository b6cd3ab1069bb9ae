"""The capacity search end to end on this machine: sa-bench against the test server's scripted
latency curve (`python -m srt_bench.testing --ttft-ms-per-stream ...`), whose capacity is known
in advance. Prints, per repeat, the capacity found against the truth (and its error), the points
measured, and the target the next point up missed; last line: how many runs landed within 5% of
the truth in at most 5 points.

The curve is packages/srt-bench/tests/test_capacity_run.py's: TTFT 10 ms + 6 ms per stream in
flight, ITL 1 ms + 0.01 ms per stream, targets p99 TTFT 610 ms and p99 ITL 12 ms, truth 100
streams. That test checks the verdict against its evidence; this script holds the accuracy claim
(docs/testing.md), which depends on this machine's load: run it beside two CPU hogs
(`stress-ng --cpu 2`) to see what a busy machine does to it.

    uv run --frozen python benchmarks/capacity_live.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import msgspec

from srt_bench import BuildContext, build_plan, decode_run_config, run_plan
from srt_bench.testing import LatencyCurve, write_tiny_model

CURVE = LatencyCurve(ttft_ms=10.0, itl_ms=1.0, ttft_ms_per_stream=6.0, itl_ms_per_stream=0.01)
TTFT_LIMIT, ITL_LIMIT = 610.0, 12.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_server() -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    argv = [sys.executable, "-m", "srt_bench.testing", "--port", str(port), "--tokens", "4"]
    argv += ["--honour-max-tokens", "--ttft-ms", str(CURVE.ttft_ms)]
    argv += ["--ttft-ms-per-stream", str(CURVE.ttft_ms_per_stream)]
    argv += ["--itl-ms", str(CURVE.itl_ms), "--itl-ms-per-stream", str(CURVE.itl_ms_per_stream)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=1):
                return proc, url
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise SystemExit("the curve server did not start") from None
            time.sleep(0.1)


def _search(url: str, model: Path, out: Path) -> dict[str, object]:
    doc = {
        "benchmark": {
            "type": "sa-bench",
            "isl": 16,
            "osl": 4,
            "random_range_ratio": 1.0,
            "num_prompts_mult": 8,
            "num_warmup_mult": 1,
            "reuse_http_connections": True,
            "capacity": {"targets": {"ttft_p99_ms": TTFT_LIMIT, "itl_p99_ms": ITL_LIMIT}},
        },
        "endpoint": url,
        "model_name": "tiny",
        "tokenizer_path": str(model),
        "total_gpus": 1,
        "output_dir": str(out),
    }
    config = decode_run_config(msgspec.json.encode(doc))
    plan = build_plan(config, BuildContext(out_dir=out))
    run_plan(plan, config, out, log=lambda _line: None, stop=threading.Event())
    capacity: dict[str, object] = json.loads((out / "benchmark-rollup.json").read_text())[
        "capacity"
    ]
    return capacity


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    truth = CURVE.capacity(ttft_limit_ms=TTFT_LIMIT, itl_limit_ms=ITL_LIMIT)
    assert truth is not None
    good = 0
    with tempfile.TemporaryDirectory(prefix="capacity-live-") as tmp:
        model = write_tiny_model(Path(tmp) / "model")
        proc, url = _start_server()
        try:
            for i in range(args.repeats):
                out = Path(tmp) / f"run{i}"
                out.mkdir()
                cap = _search(url, model, out)
                points = [p["concurrency"] for p in cap["points"]]  # type: ignore[attr-defined]
                found = cap["capacity"]
                up = next(
                    (p for p in cap["points"] if p["concurrency"] == cap["next_up"]),  # type: ignore[attr-defined]
                    None,
                )
                missed = [r["target"] for r in up["readings"] if not r["meets"]] if up else []
                error = (found / truth - 1) * 100 if isinstance(found, int) else float("nan")
                ok = isinstance(found, int) and abs(error) <= 5 and len(points) <= 5
                good += ok
                print(
                    f"run {i + 1}: {cap['status']} capacity {found} (truth {truth}, "
                    f"{error:+.1f}%) in {len(points)} points {points}; next up missed {missed}"
                )
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    print(f"{good}/{args.repeats} runs within 5% of the truth in at most 5 points")


if __name__ == "__main__":
    main()
