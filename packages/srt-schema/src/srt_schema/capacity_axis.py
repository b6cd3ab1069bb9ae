"""The rate axis of a capacity search (`benchmark.capacity.axis: request_rate`, pure): its
defaults, its integer grid and how a rate is written.

The search itself works on integers (srt_bench.capacity.search). On the rate axis those integers
are levels of a grid: rate = level x `request_rate_step`. The range's ends are rounded inwards to
the grid (the lowest level at or above `min_request_rate`, the highest at or below
`max_request_rate`), so every measured rate lies in the range the recipe names. Defined here,
beside the schema, because `srtctl validate` refuses an empty grid and srt-bench searches it.
"""

from __future__ import annotations

import math

import msgspec

from srt_schema.recipe import CapacitySearchConfig

__all__ = [
    "DEFAULT_MIN_REQUEST_RATE",
    "DEFAULT_REQUEST_RATE_STEP",
    "DEFAULT_SECONDS_PER_POINT",
    "RATE_FIELDS",
    "RateGrid",
    "build_rate_grid",
    "format_rate",
    "level_rate",
    "rate_level",
    "requests_per_point",
    "short_points",
]

#: requests/s: `min_request_rate` when unset.
DEFAULT_MIN_REQUEST_RATE = 1.0
#: requests/s: `request_rate_step` when unset.
DEFAULT_REQUEST_RATE_STEP = 0.1
#: seconds: `seconds_per_point` when unset (a point sends ceil(rate x seconds) requests).
DEFAULT_SECONDS_PER_POINT = 30.0
#: The fields only the rate axis reads, in the schema's order.
RATE_FIELDS = (
    "min_request_rate",
    "max_request_rate",
    "request_rate_step",
    "seconds_per_point",
)
#: Rounding slack when a range end is itself on the grid (0.3 / 0.1 is 2.9999999999999996).
_EPS = 1e-9


class RateGrid(msgspec.Struct, frozen=True, kw_only=True):
    """The levels a rate search may measure: rate = level x step (requests/s)."""

    step: float
    min_level: int
    max_level: int


def level_rate(level: int, step: float) -> float:
    """The rate of a grid level, rounded to 9 decimals (3 x 0.1 is 0.3, not
    0.30000000000000004)."""
    return round(level * step, 9)


def rate_level(rate: float, step: float) -> int:
    """The grid level of a rate."""
    return round(rate / step)


def build_rate_grid(config: CapacitySearchConfig, max_request_rate: float) -> RateGrid:
    """The grid of a rate search (`max_request_rate` is the config's, which the caller checked
    is set); `min_level > max_level` when no rate of the grid lies in the range."""
    step = config.request_rate_step or DEFAULT_REQUEST_RATE_STEP
    low = DEFAULT_MIN_REQUEST_RATE if config.min_request_rate is None else config.min_request_rate
    return RateGrid(
        step=step,
        min_level=max(1, math.ceil(low / step - _EPS)),
        max_level=math.floor(max_request_rate / step + _EPS),
    )


def format_rate(rate: float) -> str:
    """A rate as a short decimal, without exponent: 2.5, 12, 0.05."""
    return f"{rate:.6f}".rstrip("0").rstrip(".")


def requests_per_point(rate: float, seconds: float) -> int:
    """The measured requests of a rate point: ceil(rate x seconds), at least one (rounded to 6
    decimals first, so 0.3 req/s for 10 s is 3 requests, not 4)."""
    return max(1, math.ceil(round(rate * seconds, 6)))


def short_points(step: float, seconds: float | None) -> str | None:
    """Why `seconds_per_point` is too short for the grid, or None.

    A rate point lets every request in as it arrives, so its in-flight cap (its `max_concurrency`
    in the result, the rollup, the windows and the verdicts, which tell points apart by it) is its
    request count. With `step x seconds >= 1` two rates of the grid never send the same count."""
    s = DEFAULT_SECONDS_PER_POINT if seconds is None else seconds
    if round(step * s, 9) >= 1:
        return None
    return (
        f"request_rate_step {format_rate(step)} x seconds_per_point {s:g} is below 1: two rates "
        "of the grid could send the same number of requests, by which their runs are told "
        f"apart; set seconds_per_point to at least {format_rate(1 / step)}"
    )
