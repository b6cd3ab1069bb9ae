"""`srtctl compare` over 1,000 runs: the time to read, compare and print them.

Usage: ``uv run --frozen python benchmarks/compare_speed.py [--runs 1000] [--repeat 3]``

Makes a folder of ``--runs`` job folders (in a temporary folder), each as a finished sa-bench job
leaves it: ``logs/benchmark-rollup.json`` with 8 concurrencies, every run carrying `energy`,
`client_load` and `validity` (about 12 KB, what a power-measured run writes; one window in 50 is
invalid), and ``config.yaml`` (a resolved disaggregated recipe, a different one per run: the
recipe diff parses and compares every one). Result JSONs are left out: with
per-request records the bootstrap dominates and grows with the requests, not with the runs.

Prints the best of ``--repeat`` timings of the library (read + compare + text) and of the whole
command as a user runs it (``srtctl compare <folder>``, a new process, output to /dev/null).
Goal: under 2 s for 1,000 runs. The last line is ``compare <N> runs: <seconds> s``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL_SECONDS = 2.0
CONCURRENCIES = (1, 4, 8, 16, 32, 64, 128, 256)

CONFIG = """\
schema: 2
name: dsr1-disagg
model:
  path: /models/deepseek-r1
  container: /containers/sglang.sqsh
  precision: fp8
resources:
  gpu_type: gb200
  gpus_per_node: 4
engine: sglang
roles:
  prefill:
    nodes: 2
    workers: 4
    args:
      tensor-parallel-size: 2
      mem-fraction-static: {fraction}
      chunked-prefill-size: {chunk}
  decode:
    nodes: 4
    workers: 1
    args:
      tensor-parallel-size: 16
      mem-fraction-static: 0.88
      cuda-graph-max-bs: 256
frontend:
  type: dynamo
  enable_multiple_frontends: true
  num_additional_frontends: 3
benchmark:
  type: sa-bench
  isl: 1024
  osl: 1024
  concurrencies: [1, 4, 8, 16, 32, 64, 128, 256]
"""


def _run(i: int, c: int) -> dict[str, object]:
    scale = 1.0 + (i % 97) / 500
    tok = 900.0 * c**0.8 * scale
    tpot = 8.0 + c / 16 / scale
    valid = (i * 8 + c) % 50 != 0
    return {
        "concurrency": c,
        "throughput_toks": tok,
        "request_throughput": tok / 1024,
        "ttft_mean_ms": 120.0 + c,
        "ttft_p99_ms": 300.0 + 2 * c,
        "tpot_mean_ms": tpot,
        "tpot_p99_ms": tpot * 1.4,
        "itl_mean_ms": tpot,
        "itl_p99_ms": tpot * 2.1,
        "e2el_mean_ms": 120.0 + c + 1023 * tpot,
        "completed_requests": 10 * c,
        "total_input_tokens": 10 * c * 1024,
        "total_output_tokens": 10 * c * 1024,
        "total_token_throughput": 2 * tok,
        "ttft_median_ms": 110.0 + c,
        "tpot_median_ms": tpot * 0.98,
        "itl_median_ms": tpot * 0.95,
        "energy": {
            "gpu_energy_joules": 5.0e5 * scale,
            "gpu_avg_power_w": 18000.0,
            "joules_per_output_token": 0.5 / scale,
            "joules_per_total_token": 0.25 / scale,
            "per_gpu_joules": {f"node-{n:02d}/{g}": 2.0e4 for n in range(1, 7) for g in range(4)},
            "per_node_joules": {f"node-{n:02d}": 8.0e4 for n in range(1, 7)},
            "cpu_energy_joules": 3.0e4,
            "per_node_cpu_joules": {f"node-{n:02d}": 5.0e3 for n in range(1, 7)},
            "power_coverage_valid": True,
            "reason_codes": [],
        },
        "client_load": {
            "loop_lag_p50_ms": 0.4,
            "loop_lag_p99_ms": 2.5,
            "loop_lag_max_ms": 7.0,
            "lag_samples": 6000,
            "cpu_seconds": 20.0,
            "wall_seconds": 60.0,
            "cpu_share": 0.33,
        },
        "validity": {"verdict": "valid"}
        if valid
        else {
            "verdict": "invalid",
            "reasons": [{"code": "client_saturated", "detail": "p99 event-loop lag 84 ms > 25 ms"}],
        },
    }


def make_runs(root: Path, count: int) -> None:
    for i in range(count):
        job = root / f"local-20261202T{i:06d}Z"
        (job / "logs").mkdir(parents=True)
        rollup = {
            "benchmark_type": "sa-bench",
            "timestamp": "2026-12-02T10:00:00Z",
            "config": {"model": "deepseek-r1", "isl": 1024, "osl": 1024},
            "runs": [_run(i, c) for c in CONCURRENCIES],
            "power": {
                "publication_valid": True,
                "status": "complete",
                "required": True,
                "reason_codes": [],
                "missing": None,
            },
            "validity": {"verdict": "valid"},
        }
        (job / "logs" / "benchmark-rollup.json").write_text(json.dumps(rollup, indent=2))
        (job / "config.yaml").write_text(
            CONFIG.format(chunk=4096 + 512 * (i % 8), fraction=0.8 + i / 100_000)
        )


def time_library(root: Path) -> float:
    from srt_cli.compare.inputs import read_inputs
    from srt_cli.compare.model import Options, build_comparison
    from srt_cli.compare.render_text import render_text

    start = time.perf_counter()
    runs, missing = read_inputs([root])
    comparison = build_comparison(runs, missing, Options(resamples=1000, seed=19))
    text = render_text(comparison)
    elapsed = time.perf_counter() - start
    assert len(comparison.runs) == len(runs) and text
    return elapsed


def time_command(root: Path) -> float:
    srtctl = shutil.which("srtctl", path=str(Path(sys.executable).parent))
    if srtctl is None:
        raise SystemExit("srtctl is not installed next to this interpreter (uv sync)")
    start = time.perf_counter()
    subprocess.run([srtctl, "compare", str(root)], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=1000, help="job folders to compare")
    parser.add_argument("--repeat", type=int, default=3, help="timings of each; the best counts")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="srt-compare-speed-") as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        make_runs(root, args.runs)
        size = sum(p.stat().st_size for p in root.glob("*/logs/benchmark-rollup.json"))
        print(
            f"made {args.runs} runs in {time.perf_counter() - start:.2f} s "
            f"(rollups {size / args.runs / 1024:.1f} KB each)"
        )
        library = min(time_library(root) for _ in range(args.repeat))
        print(f"library (read + compare + text): {library:.2f} s")
        command = min(time_command(root) for _ in range(args.repeat))
        print(f"goal: under {GOAL_SECONDS:.0f} s: {'met' if command < GOAL_SECONDS else 'MISSED'}")
        print(f"compare {args.runs} runs: {command:.2f} s")
    return 0 if command < GOAL_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
