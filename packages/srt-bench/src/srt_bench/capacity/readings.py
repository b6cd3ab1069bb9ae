"""Targets and readings: what a capacity search measures at one point (pure).

A point's readings come from its sa-bench result document (the per-request arrays `ttfts`,
`e2els`, `itls`, `output_lens`, `errors`; seconds): the same samples and the same percentile
(linear interpolation between closest ranks) as the document's own `p<P>_<metric>_ms` keys, plus
a 95% confidence interval of that percentile.

The interval is distribution-free, from order statistics: with `n` sorted samples and quantile
`q`, the ranks `floor(nq - z sqrt(nq(1-q)))` and `ceil(nq + z sqrt(nq(1-q))) + 1` (z = 1.96)
bound it (the normal approximation of the binomial count of samples below the quantile). It costs
one sort, needs no resampling and no seed, so it is cheap for the 10^5 pooled ITL gaps of a
large point where a bootstrap is not. An end the sample is too small to bound is None (p99 needs
about 700 samples for both ends). ITL gaps are pooled over requests and treated as independent
samples; gaps of one stream are correlated, so the ITL interval is a little optimistic.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Literal, cast

import msgspec

from srt_bench.errors import BenchConfigError
from srt_schema.bench_result import BenchResult, Metric, percentile
from srt_schema.capacity_axis import (
    DEFAULT_REQUEST_RATE_STEP,
    DEFAULT_SECONDS_PER_POINT,
    build_rate_grid,
    format_rate,
    level_rate,
    rate_level,
    short_points,
)
from srt_schema.recipe import CapacitySearchConfig
from srt_schema.rollup_capacity import CapacityAxis, CapacityPoint, CapacityTarget, TargetReading

__all__ = [
    "Z_95",
    "SearchSpec",
    "build_readings",
    "build_search_spec",
    "percentile_interval",
    "request_samples",
]

#: The two-sided 95% quantile of the normal distribution.
Z_95 = 1.959964
_TARGET_KEY = re.compile(r"^(ttft|tpot|itl|e2el)_p(\d+)_ms$")


class SearchSpec(msgspec.Struct, frozen=True, kw_only=True):
    """`benchmark.capacity`, resolved: the set targets in the schema's order, and the range.

    The search works on integers, `values`: concurrencies on the concurrency axis, levels of the
    rate grid on the request-rate axis (rate = level x `request_rate_step`,
    srt_schema.capacity_axis).
    """

    targets: tuple[CapacityTarget, ...]
    min_value: int
    max_value: int
    max_points: int
    tolerance: float
    max_step: float
    axis: CapacityAxis = "concurrency"
    #: The request-rate axis: the grid's step (requests/s) and the seconds of arrivals each
    #: point sends.
    request_rate_step: float = DEFAULT_REQUEST_RATE_STEP
    seconds_per_point: float = DEFAULT_SECONDS_PER_POINT

    def rate(self, value: int) -> float:
        """The request rate of a level of the rate grid (requests/s)."""
        return level_rate(value, self.request_rate_step)

    def value_of(self, point: CapacityPoint) -> int:
        """The point's place on the search's axis."""
        if self.axis == "concurrency":
            return point.concurrency
        assert point.request_rate is not None, "a rate point carries its rate"
        return rate_level(point.request_rate, self.request_rate_step)

    def show(self, value: float) -> str:
        """A value (or a predicted crossing between two) as the log says it."""
        if self.axis == "concurrency":
            return str(value) if isinstance(value, int) else f"{value:.1f}"
        if isinstance(value, int):
            return f"{format_rate(self.rate(value))} req/s"
        return f"{value * self.request_rate_step:.2f} req/s"

    def bound(self, end: Literal["min", "max"]) -> str:
        """The recipe field that names an end of the range."""
        return f"{end}_{self.axis}"

    def point_name(self, value: int) -> str:
        """`concurrency 12` or `request rate 2.5 req/s`."""
        where = "concurrency" if self.axis == "concurrency" else "request rate"
        return f"{where} {self.show(value)}"


def build_search_spec(config: CapacitySearchConfig) -> SearchSpec:
    """The spec of a recipe's `benchmark.capacity` (`srtctl validate` refuses the same)."""
    targets: list[CapacityTarget] = []
    for key, limit in msgspec.structs.asdict(config.targets).items():
        found = _TARGET_KEY.match(key)
        if limit is None or found is None:
            continue
        metric = cast(Metric, found.group(1))
        targets.append(
            CapacityTarget(
                name=key, metric=metric, percentile=float(found.group(2)), limit_ms=float(limit)
            )
        )
    if not targets:
        raise BenchConfigError(
            "$.benchmark.capacity.targets: a capacity search needs at least one latency target, "
            "e.g. ttft_p99_ms: 500"
        )
    spec = SearchSpec(
        targets=tuple(targets),
        min_value=config.min_concurrency,
        max_value=config.max_concurrency,
        max_points=config.max_points,
        tolerance=config.tolerance,
        max_step=config.max_step,
    )
    if config.axis == "concurrency":
        if config.min_concurrency > config.max_concurrency:
            raise BenchConfigError(
                f"$.benchmark.capacity.min_concurrency: {config.min_concurrency} is above "
                f"max_concurrency {config.max_concurrency}"
            )
        return spec
    if config.max_request_rate is None:
        raise BenchConfigError(
            "$.benchmark.capacity.max_request_rate: axis request_rate needs max_request_rate "
            "(requests/s), e.g. 64"
        )
    grid = build_rate_grid(config, config.max_request_rate)
    short = short_points(grid.step, config.seconds_per_point)
    if short:
        raise BenchConfigError(f"$.benchmark.capacity.seconds_per_point: {short}")
    if grid.min_level > grid.max_level:
        raise BenchConfigError(
            "$.benchmark.capacity: no multiple of request_rate_step "
            f"{format_rate(grid.step)} lies in [min_request_rate, max_request_rate]"
        )
    return msgspec.structs.replace(
        spec,
        axis="request_rate",
        min_value=grid.min_level,
        max_value=grid.max_level,
        request_rate_step=grid.step,
        seconds_per_point=config.seconds_per_point or DEFAULT_SECONDS_PER_POINT,
    )


def percentile_interval(
    ordered: Sequence[float], p: float, z: float = Z_95
) -> tuple[float | None, float | None]:
    """The confidence interval of the `p`-th percentile of sorted samples (None: unbounded)."""
    n = len(ordered)
    if n == 0:
        return None, None
    q = p / 100.0
    half = z * math.sqrt(n * q * (1.0 - q))
    low_rank = math.floor(n * q - half)
    high_rank = math.ceil(n * q + half) + 1
    low = ordered[low_rank - 1] if 1 <= low_rank <= n else None
    high = ordered[high_rank - 1] if 1 <= high_rank <= n else None
    return low, high


def request_samples(doc: BenchResult) -> dict[Metric, list[float]]:
    """Milliseconds per metric over the completed requests (the definitions of
    `srt_schema.bench_result`: per-request TPOT `request_tpot`; ITL per chunk, pooled)."""
    ok = doc.succeeded()
    n = len(doc.output_lens)
    ttfts = doc.ttfts if len(doc.ttfts) == n else [None] * n
    e2els = doc.e2els if doc.e2els is not None and len(doc.e2els) == n else [None] * n
    tpots = doc.request_tpots() or [None] * n
    itls = doc.itls if len(doc.itls) == n else [[] for _ in range(n)]
    out: dict[Metric, list[float]] = {"ttft": [], "tpot": [], "itl": [], "e2el": []}
    for i in ok:
        if (ttft := ttfts[i]) is not None:
            out["ttft"].append(ttft * 1000.0)
        if (e2el := e2els[i]) is not None:
            out["e2el"].append(e2el * 1000.0)
        if (tpot := tpots[i]) is not None:
            out["tpot"].append(tpot * 1000.0)
        out["itl"].extend(g * 1000.0 for g in itls[i])
    return out


def build_readings(
    doc: BenchResult, targets: Sequence[CapacityTarget]
) -> tuple[TargetReading, ...]:
    """Every target's reading at the point whose result document is `doc`."""
    samples = {name: sorted(values) for name, values in request_samples(doc).items()}
    readings: list[TargetReading] = []
    for t in targets:
        ordered = samples[t.metric]
        if not ordered:
            readings.append(
                TargetReading(
                    target=t.name,
                    value_ms=None,
                    ci_low_ms=None,
                    ci_high_ms=None,
                    samples=0,
                    meets=False,
                )
            )
            continue
        value = percentile(ordered, t.percentile)
        low, high = percentile_interval(ordered, t.percentile)
        readings.append(
            TargetReading(
                target=t.name,
                value_ms=value,
                ci_low_ms=low,
                ci_high_ms=high,
                samples=len(ordered),
                meets=value <= t.limit_ms,
            )
        )
    return tuple(readings)
