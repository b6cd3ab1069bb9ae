"""Latency and throughput statistics of one phase (pure).

Definitions (docs/telemetry-and-bench.md#metric-definitions; the functions are
`srt_schema.bench_result`'s, shared by every reader): TTFT per request; TPOT =
`request_tpot` = (latency - TTFT) / (output_tokens - 1) for requests with more than one output
token; ITL = gaps between consecutive text-carrying chunks (per chunk), pooled over requests;
E2EL = request latency; goodput = completed requests meeting every set SLO per second. A metric
no request could measure is reported as unmeasured with the reason, never as zero.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec

from srt_bench.records import RequestRecord
from srt_schema.bench_result import METRICS, Metric, percentile, request_tpot

__all__ = [
    "METRICS",
    "Goodput",
    "LatencySummary",
    "Metric",
    "PhaseMetrics",
    "build_phase_metrics",
    "mean",
    "peak_output_tokens_per_s",
    "percentile",
    "stdev",
    "summarize",
]


class LatencySummary(msgspec.Struct, frozen=True, kw_only=True):
    """Milliseconds; `unmeasured` is the reason when no sample exists (every number is None)."""

    count: int
    mean_ms: float | None
    median_ms: float | None
    std_ms: float | None
    percentiles_ms: tuple[tuple[float, float | None], ...]
    unmeasured: str | None = None


class Goodput(msgspec.Struct, frozen=True, kw_only=True):
    """SLOs in milliseconds; a request is good when every set SLO is met."""

    ttft_ms: float | None = None
    tpot_ms: float | None = None
    e2el_ms: float | None = None

    @property
    def enabled(self) -> bool:
        return any(v is not None for v in (self.ttft_ms, self.tpot_ms, self.e2el_ms))


class PhaseMetrics(msgspec.Struct, frozen=True, kw_only=True):
    duration: float
    requested: int
    completed: int
    failed: int
    total_input_tokens: int
    total_output_tokens: int
    request_throughput: float
    request_goodput: float | None
    output_throughput: float
    total_token_throughput: float
    output_throughput_per_gpu: float
    total_token_throughput_per_gpu: float
    peak_output_tokens_per_s: float | None
    token_sources: dict[str, int]
    latencies: dict[str, LatencySummary]


def mean(values: Sequence[float]) -> float:
    if not values:
        raise ValueError("mean of an empty sequence")
    return math.fsum(values) / len(values)


def stdev(values: Sequence[float]) -> float:
    """Population standard deviation (numpy's default, ddof=0)."""
    m = mean(values)
    return math.sqrt(math.fsum((v - m) ** 2 for v in values) / len(values))


def summarize(
    seconds: Sequence[float], percentiles: Sequence[float], *, why_empty: str
) -> LatencySummary:
    """Summarize samples given in seconds; report milliseconds."""
    if not seconds:
        return LatencySummary(
            count=0,
            mean_ms=None,
            median_ms=None,
            std_ms=None,
            percentiles_ms=tuple((p, None) for p in percentiles),
            unmeasured=why_empty,
        )
    ms = [s * 1000.0 for s in seconds]
    return LatencySummary(
        count=len(ms),
        mean_ms=mean(ms),
        median_ms=percentile(ms, 50.0),
        std_ms=stdev(ms),
        percentiles_ms=tuple((p, percentile(ms, p)) for p in percentiles),
    )


def _tpot(r: RequestRecord) -> float | None:
    return request_tpot(r.ttft, r.latency, r.output_tokens)


def peak_output_tokens_per_s(records: Sequence[RequestRecord], duration: float) -> float | None:
    """Max of the 10-second moving average of output tokens per 1-second bin.

    A request's tokens are spread evenly over its text-carrying chunks (one token per chunk when
    the server streams per token); a request whose tokens came only in `usage` counts them at its
    completion. Shorter runs average over all their bins. None when no token was produced.
    """
    bins_n = max(1, math.ceil(duration))
    bins = [0.0] * bins_n
    total = 0.0
    for r in records:
        if not r.success or r.output_tokens == 0:
            continue
        total += r.output_tokens
        times = r.chunk_times or (r.send_time + r.latency,)
        share = r.output_tokens / len(times)
        for t in times:
            bins[min(bins_n - 1, max(0, int(t)))] += share
    if total == 0:
        return None
    window = min(10, bins_n)
    running = math.fsum(bins[:window])
    best = running
    for i in range(window, bins_n):
        running += bins[i] - bins[i - window]
        best = max(best, running)
    return best / window


def _is_good(r: RequestRecord, slo: Goodput) -> bool:
    checks: list[tuple[float | None, float | None]] = [
        (slo.ttft_ms, r.ttft),
        (slo.tpot_ms, _tpot(r)),
        (slo.e2el_ms, r.latency),
    ]
    for limit_ms, value_s in checks:
        if limit_ms is None:
            continue
        if value_s is None or value_s * 1000.0 > limit_ms:
            return False
    return True


def build_phase_metrics(
    records: Sequence[RequestRecord],
    *,
    duration: float,
    total_gpus: int,
    percentiles: Sequence[float],
    goodput: Goodput | None = None,
) -> PhaseMetrics:
    """All numbers of one phase from its request records."""
    ok = [r for r in records if r.success]
    completed = len(ok)
    total_in = sum(r.input_tokens for r in ok)
    total_out = sum(r.output_tokens for r in ok)
    safe_duration = duration if duration > 0 else math.inf
    sources: dict[str, int] = {}
    for r in ok:
        sources[r.token_source] = sources.get(r.token_source, 0) + 1

    no_text = "no response carried generated text in a stream chunk (tokens only in usage)"
    ttfts = [r.ttft for r in ok if r.ttft is not None]
    tpots = [t for r in ok if (t := _tpot(r)) is not None]
    itls = [gap for r in ok for gap in r.itls]
    e2els = [r.latency for r in ok]
    latencies = {
        "ttft": summarize(
            ttfts, percentiles, why_empty="no completed request" if not ok else no_text
        ),
        "tpot": summarize(
            tpots,
            percentiles,
            why_empty="no completed request"
            if not ok
            else "needs a measured TTFT and more than one output token",
        ),
        "itl": summarize(
            itls,
            percentiles,
            why_empty="no completed request"
            if not ok
            else "no response streamed two or more text chunks (the server batches its tokens)",
        ),
        "e2el": summarize(e2els, percentiles, why_empty="no completed request"),
    }
    good: float | None = None
    if goodput is not None and goodput.enabled:
        good = sum(1 for r in ok if _is_good(r, goodput)) / safe_duration
    out_tp = total_out / safe_duration
    total_tp = (total_in + total_out) / safe_duration
    return PhaseMetrics(
        duration=duration,
        requested=len(records),
        completed=completed,
        failed=len(records) - completed,
        total_input_tokens=total_in,
        total_output_tokens=total_out,
        request_throughput=completed / safe_duration,
        request_goodput=good,
        output_throughput=out_tp,
        total_token_throughput=total_tp,
        output_throughput_per_gpu=out_tp / total_gpus,
        total_token_throughput_per_gpu=total_tp / total_gpus,
        peak_output_tokens_per_s=peak_output_tokens_per_s(records, duration),
        token_sources=dict(sorted(sources.items())),
        latencies=latencies,
    )
