"""The sa-bench per-phase result JSON (`results_concurrency_<c>_gpus_<n>[...].json`,
docs/telemetry-and-bench.md#sa-bench-results): builds `srt_schema.bench_result.BenchResult`, the
file's one definition.

Key names and units follow the reference so tools that read srt-slurm results keep working.
Latencies are milliseconds; a metric that could not be measured is null, and the reason is under
`unmeasured_metrics`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from srt_bench.records import RequestRecord
from srt_bench.stats import METRICS, PhaseMetrics
from srt_schema.bench_result import BenchOutcome, BenchResult, encode_bench_result, request_tpot
from srt_schema.capacity_axis import format_rate

__all__ = [
    "MAX_FAILURE_RATE",
    "build_outcome",
    "build_result",
    "encode_result",
    "format_percentile",
    "result_stem",
]

#: A phase whose failed/requested ratio exceeds this fails the benchmark.
MAX_FAILURE_RATE = 0.05


def result_stem(
    concurrency: int,
    total_gpus: int,
    prefill_gpus: int | None,
    decode_gpus: int | None,
    *,
    request_rate: float | None = None,
) -> str:
    """The reference's name; a point of a request-rate capacity search adds `_rate_<r>` (its
    requests/s), so points that share an in-flight cap do not overwrite each other."""
    stem = f"results_concurrency_{concurrency}_gpus_{total_gpus}"
    if prefill_gpus is not None and decode_gpus is not None:
        stem += f"_ctx_{prefill_gpus}_gen_{decode_gpus}"
    if request_rate is not None:
        stem += f"_rate_{format_rate(request_rate)}"
    return stem


def format_percentile(p: float) -> str:
    """99.0 -> "99", 99.9 -> "99.9" (the key suffix of `p<P>_<metric>_ms`)."""
    return str(int(p)) if float(p).is_integer() else str(p)


def build_outcome(metrics: PhaseMetrics) -> BenchOutcome:
    """`benchmark_outcome`: failed when the failure rate exceeds 5% or no token came back."""
    requested = metrics.requested
    rate = metrics.failed / requested if requested else 1.0
    reasons: list[str] = []
    if rate > MAX_FAILURE_RATE:
        reasons.append(
            f"request failure rate {rate:.1%} ({metrics.failed}/{requested}) exceeds "
            f"{MAX_FAILURE_RATE:.0%}"
        )
    if metrics.total_output_tokens == 0:
        reasons.append("zero output tokens: no completed request produced a token")
    return BenchOutcome(
        status="failed" if reasons else "passed",
        requested=requested,
        completed=metrics.completed,
        failed=metrics.failed,
        max_failure_rate=MAX_FAILURE_RATE,
        reasons=tuple(reasons),
    )


def _summary_fields(metrics: PhaseMetrics) -> dict[str, float | None]:
    fields: dict[str, float | None] = {}
    for name in METRICS:
        summary = metrics.latencies[name]
        fields[f"mean_{name}_ms"] = summary.mean_ms
        fields[f"median_{name}_ms"] = summary.median_ms
        fields[f"std_{name}_ms"] = summary.std_ms
        for p, value in summary.percentiles_ms:
            if p in _DECLARED:
                fields[f"p{format_percentile(p)}_{name}_ms"] = value
    return fields


#: The percentiles `BenchResult` declares; others are written by `encode_result`.
_DECLARED = (50.0, 90.0, 99.0)


def build_result(
    *,
    header: Mapping[str, Any],
    metrics: PhaseMetrics,
    records: Sequence[RequestRecord],
    percentiles: Sequence[float],
    start_unix: float,
    end_unix: float,
    reuse_http_connections: bool,
    requested_num_prompts: int,
) -> BenchResult:
    """The whole result (pure)."""
    rate = header["request_rate"]
    if isinstance(rate, float) and math.isinf(rate):
        rate = "inf"
    result = BenchResult(
        **{**header, "request_rate": rate},
        num_prompts=len(records),
        requested_num_prompts=requested_num_prompts,
        duration=metrics.duration,
        benchmark_start_time_unix=start_unix,
        benchmark_end_time_unix=end_unix,
        completed=metrics.completed,
        failed=metrics.failed,
        total_input_tokens=metrics.total_input_tokens,
        total_output_tokens=metrics.total_output_tokens,
        output_token_sources=metrics.token_sources,
        request_throughput=metrics.request_throughput,
        request_goodput=metrics.request_goodput,
        output_throughput=metrics.output_throughput,
        peak_output_tokens_per_s=metrics.peak_output_tokens_per_s,
        total_token_throughput=metrics.total_token_throughput,
        output_throughput_per_gpu=metrics.output_throughput_per_gpu,
        total_token_throughput_per_gpu=metrics.total_token_throughput_per_gpu,
        input_lens=[r.input_tokens for r in records],
        output_lens=[r.output_tokens for r in records],
        ttfts=[r.ttft for r in records],
        e2els=[r.latency for r in records],
        tpots=[request_tpot(r.ttft, r.latency, r.output_tokens) for r in records],
        itls=[list(r.itls) for r in records],
        chunk_tokens=[list(r.chunk_tokens) for r in records],
        generated_texts=[r.text for r in records],
        errors=[r.error for r in records],
        itl_definition="per-chunk",
        unmeasured_metrics={
            name: why for name in METRICS if (why := metrics.latencies[name].unmeasured) is not None
        },
        percentiles=[format_percentile(p) for p in percentiles],
        reuse_http_connections=reuse_http_connections,
        benchmark_outcome=build_outcome(metrics),
    )
    return msgspec.structs.replace(result, **_summary_fields(metrics))


def encode_result(result: BenchResult, metrics: PhaseMetrics) -> bytes:
    """The file's bytes, with the reference's key of every configured percentile."""
    extra = {
        name: {p: v for p, v in metrics.latencies[name].percentiles_ms if p not in _DECLARED}
        for name in METRICS
    }
    return encode_bench_result(result, extra_percentiles_ms=extra)
