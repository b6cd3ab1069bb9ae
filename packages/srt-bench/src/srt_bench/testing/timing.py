"""How far a client's TTFT and ITL are from a token schedule's truth (pure; milliseconds).

Two comparisons (benchmarks/client_capacity.py prints both):
- distribution: a client's reported p50/p99 minus the truth's p50/p99 over the same prompts (or,
  for a client whose prompts are unknown, a large population of keys). Works for any client
  that reports percentiles. ITL comes in two definitions: `pooled` (every gap between two tokens
  is a sample: ours, inference-perf) and `per-request` (each request's mean gap,
  `(last token - first token) / (tokens - 1)`: aiperf, GuideLLM); each is compared with the
  truth of its own definition.
- paired: per request, |measured - scheduled| of its TTFT and of each of its gaps, then p50/p99
  of those errors (needs per-request records and the prompt each one sent: ours).
- delivery: per token, how long after the server's write the client stamped it, and per gap
  |measured - written| (needs the server's write times, `GET /sent_times`, on the clock the
  client stamps with: ours). This is the client's own error: the paired error also holds how
  late the server wrote (on a shared machine the server is delayed too), this one does not.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Literal

import msgspec

from srt_bench.records import RequestRecord
from srt_bench.stats import mean, percentile
from srt_bench.testing.schedule import TokenSchedule, token_times

__all__ = [
    "ItlKind",
    "ScheduleTruth",
    "TimingError",
    "build_delivery_error",
    "build_distribution_error",
    "build_paired_error",
    "build_truth",
]

ItlKind = Literal["pooled", "per-request"]


class ScheduleTruth(msgspec.Struct, frozen=True, kw_only=True):
    ttft_p50_ms: float
    ttft_p99_ms: float
    itl_p50_ms: dict[ItlKind, float]
    itl_p99_ms: dict[ItlKind, float]


class TimingError(msgspec.Struct, frozen=True, kw_only=True):
    """Milliseconds: signed (measured - truth) for distribution errors, absolute for paired."""

    ttft_p50_ms: float
    ttft_p99_ms: float
    itl_p50_ms: float
    itl_p99_ms: float


def _gaps(times: Sequence[float]) -> list[float]:
    return [b - a for a, b in itertools.pairwise(times)]


def _percentiles(ttft_ms: Sequence[float], itl_ms: Sequence[float]) -> TimingError | None:
    """p50/p99 of per-request TTFT errors and per-gap ITL errors; None when either is empty."""
    if not ttft_ms or not itl_ms:
        return None
    return TimingError(
        ttft_p50_ms=percentile(ttft_ms, 50.0),
        ttft_p99_ms=percentile(ttft_ms, 99.0),
        itl_p50_ms=percentile(itl_ms, 50.0),
        itl_p99_ms=percentile(itl_ms, 99.0),
    )


def build_truth(schedule: TokenSchedule, keys: Sequence[str], tokens: int) -> ScheduleTruth:
    """The truth's percentiles over one request per key."""
    ttfts: list[float] = []
    pooled: list[float] = []
    per_request: list[float] = []
    for key in keys:
        times = token_times(schedule, key, tokens)
        ttfts.append(times[0] * 1000.0)
        gaps = [g * 1000.0 for g in _gaps(times)]
        pooled.extend(gaps)
        if gaps:
            per_request.append(mean(gaps))
    return ScheduleTruth(
        ttft_p50_ms=percentile(ttfts, 50.0),
        ttft_p99_ms=percentile(ttfts, 99.0),
        itl_p50_ms={
            "pooled": percentile(pooled, 50.0),
            "per-request": percentile(per_request, 50.0),
        },
        itl_p99_ms={
            "pooled": percentile(pooled, 99.0),
            "per-request": percentile(per_request, 99.0),
        },
    )


def build_distribution_error(
    truth: ScheduleTruth,
    *,
    ttft_p50_ms: float,
    ttft_p99_ms: float,
    itl_p50_ms: float,
    itl_p99_ms: float,
    itl_kind: ItlKind,
) -> TimingError:
    return TimingError(
        ttft_p50_ms=ttft_p50_ms - truth.ttft_p50_ms,
        ttft_p99_ms=ttft_p99_ms - truth.ttft_p99_ms,
        itl_p50_ms=itl_p50_ms - truth.itl_p50_ms[itl_kind],
        itl_p99_ms=itl_p99_ms - truth.itl_p99_ms[itl_kind],
    )


def build_paired_error(
    schedule: TokenSchedule, keys: Sequence[str], records: Sequence[RequestRecord], tokens: int
) -> TimingError | None:
    """|measured - scheduled| per request (`keys[i]` is the prompt key record i sent); None when
    no completed request carried text chunks."""
    ttft_err: list[float] = []
    itl_err: list[float] = []
    for key, r in zip(keys, records, strict=True):
        if not r.success or r.ttft is None:
            continue
        times = token_times(schedule, key, tokens)
        ttft_err.append(abs(r.ttft - times[0]) * 1000.0)
        itl_err.extend(abs(m - t) * 1000.0 for m, t in zip(r.itls, _gaps(times), strict=False))
    return _percentiles(ttft_err, itl_err)


def build_delivery_error(
    streams: Sequence[tuple[Sequence[float], Sequence[float]]],
) -> TimingError | None:
    """Per stream (the client's stamps, the server's writes; both absolute seconds on one clock):
    the first token's stamp minus its write (as the TTFT error) and |stamped gap - written gap|
    (as the ITL error), p50/p99 in ms; None when no stream has both. A stream whose counts
    differ (a lost or merged token) is compared over the tokens both sides have."""
    first: list[float] = []
    gaps: list[float] = []
    for stamped, written in streams:
        if not stamped or not written:
            continue
        first.append((stamped[0] - written[0]) * 1000.0)
        gaps.extend(
            abs(m - w) * 1000.0 for m, w in zip(_gaps(stamped), _gaps(written), strict=False)
        )
    return _percentiles(first, gaps)
