"""A whole, made-up run folder for the dashboard's tests: every input it reads, in the layout and
formats the real writers use, with deterministic numbers (`random.Random(seed)`).

`write_fake_run(log_dir, ...)` writes, under `log_dir` (and `plan.json`, `status.json` in its
parent, the job folder): `benchmark-rollup.json`; one sa-bench result file per concurrency with
per-request `ttfts`, `itls`, `output_lens`, `errors` and the client's p50/p90/p99; GPU power
(`power/samples.csv` from the real `SamplesWriter`, `power/windows/*.json`, a complete
`manifest.json`); Tachometer's `tachometer/final.parquet` (the scraper's column schema) with
vLLM-style gauges per worker endpoint and a frontend's queue, and the `tachometer_config.json`
naming it; and for `failed=True` a `diagnosis.json` and a failed `status.json`.

Windows: 60 s each, 10 s apart, from `T0`; latencies grow with concurrency, so the charts have
shape. Used by packages/srt-telemetry/tests and the browser tier (tests/test_browser_pages.py).
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from srt_telemetry.columns import frame_schema
from srt_telemetry.power_samples import Sample, SamplesWriter

__all__ = ["T0", "WINDOW_GAP_S", "WINDOW_S", "write_fake_run"]

T0 = 1_800_000_000.0
WINDOW_S = 60.0
WINDOW_GAP_S = 10.0
_ISL, _OSL = 1024, 256


def _windows(concurrencies: Sequence[int]) -> dict[int, tuple[float, float]]:
    step = WINDOW_S + WINDOW_GAP_S
    return {
        c: (T0 + WINDOW_GAP_S + i * step, T0 + WINDOW_GAP_S + i * step + WINDOW_S)
        for i, c in enumerate(concurrencies)
    }


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q
    lo, hi = int(rank), min(len(ordered) - 1, int(rank) + 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (rank - lo)


def _result(
    c: int, gpus: int, window: tuple[float, float], rng: random.Random
) -> dict[str, object]:
    n = min(200, 10 * c)
    ttfts, itls, lens = [], [], []
    for _ in range(n):
        ttfts.append(0.05 + 0.004 * c * rng.uniform(0.5, 1.5))
        out = rng.randint(_OSL // 2, _OSL)
        lens.append(out)
        itls.append([0.004 + 0.0002 * c * rng.uniform(0.5, 2.0) for _ in range(out - 1)])
    ms = {
        "ttft": [t * 1000 for t in ttfts],
        "tpot": [sum(g) / (o - 1) * 1000 for g, o in zip(itls, lens, strict=True)],
        "itl": [x * 1000 for g in itls for x in g],
        "e2el": [(t + sum(g)) * 1000 for t, g in zip(ttfts, itls, strict=True)],
    }
    duration = window[1] - window[0]
    out_tokens = sum(lens)
    doc: dict[str, object] = {
        "max_concurrency": c,
        "total_gpus": gpus,
        "isl": _ISL,
        "osl": _OSL,
        "completed": n,
        "failed": 0,
        "benchmark_start_time_unix": window[0],
        "benchmark_end_time_unix": window[1],
        "output_throughput": out_tokens / duration,
        "output_throughput_per_gpu": out_tokens / duration / gpus,
        "output_lens": lens,
        "ttfts": ttfts,
        "itls": itls,
        "errors": [""] * n,
    }
    for m, values in ms.items():
        doc[f"mean_{m}_ms"] = sum(values) / len(values)
        for p in (50, 90, 99):
            doc[f"p{p}_{m}_ms"] = _pct(values, p / 100)
    return doc


def _metrics_frame(
    endpoints: int, concurrencies: Sequence[int], windows: dict[int, tuple[float, float]]
) -> pl.DataFrame:
    extras = ("frontend_index", "gpu", "hostname", "mode", "worker_index", "worker_role")
    schema = frame_schema(extras)
    cols: dict[str, list[object]] = {k: [] for k in schema}
    end = max(b for _, b in windows.values()) + WINDOW_GAP_S
    t = T0

    def row(endpoint: str, name: str, value: float, ts: float, **meta: str) -> None:
        for k, v in (
            ("scraper_endpoint", endpoint),
            ("metric_name", name),
            ("metric_value", value),
            ("histogram_bucket_lower", None),
            ("histogram_bucket_upper", None),
            ("histogram_sum", None),
            ("histogram_count", None),
            ("time_since_start", ts - T0),
            ("timestamp_ns", int(ts * 1e9)),
        ):
            cols[k].append(v)
        for k in extras:
            cols[k].append(meta.get(k, ""))

    while t <= end:
        load = next((c for c, (a, b) in windows.items() if a <= t <= b), 0)
        for w in range(endpoints):
            ep = f"decode_{w}_node-{1 + w % 2:02d}"
            meta = {"worker_role": "decode", "worker_index": str(w), "hostname": ep[-7:]}
            share = load / endpoints
            labels = '{engine="0",model_name="m"}'
            row(
                ep,
                f"vllm:kv_cache_usage_perc{labels}",
                min(1.0, 0.02 * share + 0.01 * w),
                t,
                **meta,
            )
            row(ep, f"vllm:gpu_cache_usage_perc{labels}", 0.5, t, **meta)  # not preferred
            row(ep, f"vllm:num_requests_running{labels}", share, t, **meta)
            row(ep, f"vllm:num_requests_waiting{labels}", max(0.0, share - 8), t, **meta)
            row(ep, "dynamo_work_handler_queue_depth", max(0.0, share - 4) / 2, t, **meta)
        front = {"frontend_index": "0", "hostname": "node-01"}
        row("frontend_0", "dynamo_frontend_queued_requests", max(0.0, load - 16), t, **front)
        row("frontend_0", "dynamo_frontend_inflight_requests", float(load), t, **front)
        t += 1.0
    frame = pl.DataFrame(cols, schema=schema)
    return frame.with_columns(
        pl.col("metric_name")
        .str.split_exact("{", 1)
        .struct.field("field_0")
        .alias("metric_name_clean")
    ).sort("metric_name", "time_since_start")


def write_fake_run(
    log_dir: Path,
    *,
    concurrencies: Sequence[int] = (1, 4, 16, 64),
    endpoints: int = 4,
    nodes: int = 2,
    gpus_per_node: int = 4,
    failed: bool = False,
    seed: int = 0,
) -> Path:
    """Write the run folder; returns `log_dir`."""
    rng = random.Random(seed)
    job_dir = log_dir.parent
    log_dir.mkdir(parents=True, exist_ok=True)
    gpus = nodes * gpus_per_node
    hosts = [f"node-{i + 1:02d}" for i in range(nodes)]
    windows = _windows(concurrencies)
    plan = {
        "job_id": "4242",
        "job_name": "fake-dsr1-disagg",
        "launcher": "slurm",
        "nodes": hosts,
        "served_model_name": "deepseek-ai/DeepSeek-R1",
        "summary": {
            "model_path": "/models/DeepSeek-R1",
            "precision": "fp8",
            "gpu_type": "gb200",
            "gpus_per_node": gpus_per_node,
            "workers": {"prefill_workers": 1, "decode_workers": endpoints},
            "benchmark_type": "sa-bench",
            "backend_type": "vllm",
            "frontend_type": "dynamo",
        },
    }
    (job_dir / "plan.json").write_text(json.dumps(plan, indent=1))
    results = log_dir / f"sa-bench_isl_{_ISL}_osl_{_OSL}"
    results.mkdir(exist_ok=True)
    runs = []
    for c in concurrencies:
        doc = _result(c, gpus, windows[c], rng)
        (results / f"results_concurrency_{c}_gpus_{gpus}.json").write_text(json.dumps(doc))
        runs.append(
            {
                "concurrency": c,
                "throughput_toks": doc["output_throughput"],
                "request_throughput": doc["completed"] / WINDOW_S,  # type: ignore[operator]
                "ttft_mean_ms": doc["mean_ttft_ms"],
                "ttft_p99_ms": doc["p99_ttft_ms"],
                "tpot_mean_ms": doc["mean_tpot_ms"],
                "tpot_p99_ms": doc["p99_tpot_ms"],
                "itl_mean_ms": doc["mean_itl_ms"],
                "itl_p99_ms": doc["p99_itl_ms"],
                "e2el_mean_ms": doc["mean_e2el_ms"],
            }
        )
    rollup = {"benchmark_type": "sa-bench", "config": {"model": "m"}, "runs": runs}
    (log_dir / "benchmark-rollup.json").write_text(json.dumps(rollup, indent=1))
    power = log_dir / "power"
    (power / "windows").mkdir(parents=True, exist_ok=True)
    writer = SamplesWriter(power / "samples.csv")
    end = max(b for _, b in windows.values()) + WINDOW_GAP_S
    for seq in range(int(end - T0) + 1):
        t = T0 + seq
        load = next((c for c, (a, b) in windows.items() if a <= t <= b), 0)
        writer.write(
            Sample(t, seq, h, g, f"{h}-GPU-{g}", 150.0 + 3.0 * load + 5 * g + rng.uniform(0, 4))
            for h in hosts
            for g in range(gpus_per_node)
        )
    writer.close()
    for c, (a, b) in windows.items():
        stem = f"results_concurrency_{c}_gpus_{gpus}"
        (power / "windows" / f"{stem}.json").write_text(
            json.dumps(
                {
                    "schema_version": 1,
                    "benchmark_type": "sa-bench",
                    "result_path": f"{results.name}/{stem}.json",
                    "concurrency": c,
                    "benchmark_start_time_unix": a,
                    "benchmark_end_time_unix": b,
                    "duration": b - a,
                    "clock_source": "head_node_unix_clock",
                    "status": "completed",
                    "reason": None,
                }
            )
        )
    manifest = {"status": "complete", "publication_valid": True, "reason_codes": []}
    (power / "manifest.json").write_text(json.dumps(manifest))
    storage = log_dir / "tachometer"
    storage.mkdir(exist_ok=True)
    _metrics_frame(endpoints, concurrencies, windows).write_parquet(storage / "final.parquet")
    (log_dir / "tachometer_config.json").write_text(
        json.dumps(
            {
                "storage": str(storage),
                "local_dir": str(job_dir / "scrape-local"),
                "endpoints": [
                    *(
                        {"name": f"decode_{w}_node-{1 + w % 2:02d}", "url": "http://x/metrics"}
                        for w in range(endpoints)
                    ),
                    {"name": "frontend_0", "url": "http://x/metrics", "filter": "frontend"},
                ],
            }
        )
    )
    status = {
        "job_id": "4242",
        "status": "failed" if failed else "completed",
        "stage": "cleanup",
        "message": "decode_3_node-02 (worker decode) on node-02 exited with code 1"
        if failed
        else "",
        "exit_code": 1 if failed else 0,
        "at": "2027-01-15T08:00:00.000+00:00",
    }
    (job_dir / "status.json").write_text(json.dumps(status))
    if failed:
        diagnosis = {
            "what": "decode_3_node-02",
            "reason": status["message"],
            "node": "node-02",
            "exit_code": 1,
            "log_line": "torch.OutOfMemoryError: CUDA out of memory",
            "log_path": str(log_dir / "node-02_decode_w3.out"),
            "log_file": "node-02_decode_w3.out",
            "log_excerpt": [
                "... 180 lines not shown",
                "| Traceback (most recent call last):",
                '|   File "worker.py", line 88, in step',
                "| torch.OutOfMemoryError: CUDA out of memory",
            ],
        }
        (log_dir / "diagnosis.json").write_text(json.dumps(diagnosis, indent=1))
        (log_dir / "node-02_decode_w3.out").write_text(
            "torch.OutOfMemoryError: CUDA out of memory\n"
        )
    return log_dir
