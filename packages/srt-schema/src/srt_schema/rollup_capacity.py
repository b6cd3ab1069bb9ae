"""The `capacity` block of `benchmark-rollup.json`: what a capacity search (sa-bench with
`benchmark.capacity`, docs/telemetry-and-bench.md#capacity-search) found and how.

Defined once here, next to the rest of the rollup (`srt_schema.rollup`), because srt-bench writes
it and `srtctl compare` / `status` may read it. Every point the search measured is also an
ordinary run of the rollup (`runs`, one per point); this block adds the targets, each
point's reading against them, why each point was chosen, why the search stopped, and a confidence
statement. Milliseconds throughout.
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = [
    "CapacityAxis",
    "CapacityPoint",
    "CapacityResult",
    "CapacityStatus",
    "CapacityTarget",
    "TargetReading",
]

#: How the search ended: `found` (a passing point and a failing one within the tolerance),
#: `at_max` (max_concurrency itself passed: the capacity is at least that), `below_min`
#: (min_concurrency already missed the targets: no capacity in the range), `max_points` (the point
#: budget ran out before the bracket was tight: the capacity is between `capacity` and `next_up`).
CapacityStatus = Literal["found", "at_max", "below_min", "max_points"]

#: What the search varied (`benchmark.capacity.axis`): the concurrency (closed loop) or the
#: request rate (open loop, requests/s).
CapacityAxis = Literal["concurrency", "request_rate"]


class CapacityTarget(msgspec.Struct, frozen=True, kw_only=True):
    """One latency limit: `name` is the recipe's key (`ttft_p99_ms`)."""

    name: str
    metric: Literal["ttft", "tpot", "itl", "e2el"]
    percentile: float
    limit_ms: float


class TargetReading(msgspec.Struct, frozen=True, kw_only=True):
    """One target at one point: the measured percentile, its 95% confidence interval
    (distribution-free, from order statistics; a bound the sample is too small for is null) and
    whether it meets the limit. `value_ms` is null when no request measured the metric."""

    target: str
    value_ms: float | None
    ci_low_ms: float | None
    ci_high_ms: float | None
    samples: int
    meets: bool


class CapacityPoint(msgspec.Struct, frozen=True, kw_only=True):
    """One measured concurrency (or request rate), in the order the search measured them."""

    #: The concurrency; on the request-rate axis, the point's in-flight cap.
    concurrency: int
    #: Every target met, the request gate passed and the measurement is valid.
    meets: bool
    #: The request gate failed (failed requests over the gate, or no output token): the server is
    #: overloaded at this point; its latencies are not interpolated through.
    overloaded: bool
    completed: int
    failed: int
    readings: tuple[TargetReading, ...]
    #: Why the search measured this point next (the search trace).
    why: str
    #: The result JSON, relative to the log folder.
    result_path: str
    #: Why this point's measurement cannot be trusted, from the client's own checks
    #: (`code: detail`, srt_schema.validity: a saturated client, a window too short). Such a
    #: point never counts as meeting the targets and its latencies are not interpolated through.
    invalid: tuple[str, ...] = ()
    #: What the search varied; `request_rate` (requests/s) is the point's rate on that axis
    #: (null on the concurrency axis).
    axis: CapacityAxis = "concurrency"
    request_rate: float | None = None


class CapacityResult(msgspec.Struct, frozen=True, kw_only=True):
    status: CapacityStatus
    #: The highest measured concurrency that met every target (null: none did, or the search
    #: varied the request rate).
    capacity: int | None
    #: The lowest measured concurrency above it that missed a target (null: none, or the search
    #: varied the request rate).
    next_up: int | None
    targets: tuple[CapacityTarget, ...]
    points: tuple[CapacityPoint, ...]
    #: Why the search stopped.
    stopped: str
    #: The readings at `capacity` are under every limit and a reading at `next_up` is over its
    #: limit, each with its whole 95% interval (false when either side is not that clear).
    confident: bool
    #: The same in one line, with the numbers.
    statement: str
    #: What the search varied. On the request-rate axis the answer is `capacity_request_rate`
    #: and the next point up `next_up_request_rate` (requests/s; null as above).
    axis: CapacityAxis = "concurrency"
    capacity_request_rate: float | None = None
    next_up_request_rate: float | None = None
