"""The capacity search's decisions (pure): given the points measured so far, the next concurrency
and why, or why to stop (docs/telemetry-and-bench.md#capacity-search).

Below, "concurrency" is the search's axis value (`SearchSpec.value_of`): on the request-rate axis
it is the level of the rate grid (rate = level x `request_rate_step`), and everything said of
concurrency holds for it unchanged (latency rises with the arrival rate too).

Latency is taken to rise with concurrency. The bracket is the highest passing concurrency `lo`
below the lowest failing one `hi` (a pass above a failure, noise, is ignored: the answer stays
conservative). The search stops when `hi <= lo * (1 + tolerance)` (or `hi = lo + 1`), when `lo`
is `max_concurrency`, when `min_concurrency` already fails, or when `max_points` are spent.

The next point, while nothing has failed (climbing): the targets' readings at `lo` and at the
highest passing point at most half of it (a baseline wide enough that the noise of two close
percentiles does not set the slope) are extrapolated linearly in concurrency to the predicted
crossing `x` (the lowest concurrency where a target reaches its limit); without a rising
target (or with one point) the climb steps by `max_step`, and it never steps further than that.
Once a point has failed (refining): the readings at `lo` and `hi` are interpolated to `x` on
log-log scales (exact for a power law, close for the flat-then-rising curves of a saturating
server); when `hi` is overloaded (its request gate failed: no usable latency), invalid (the
client's own checks say its measurement measured the client: a saturated client, a window too
short; such a point never passes) or far over a
target (above `FAR_OVER` times its limit: past a knee, where no line through two points says
where the knee is), or no target rises, the next point is the geometric midpoint instead
(bisection). benchmarks/capacity_search.py measures how many points that takes.

Given a predicted crossing `x`, the point aims to end the search with the next measurement: when
`x <= lo * (1 + tolerance)` it measures `floor(lo * (1 + tolerance))`, which closes the bracket
if it fails; else `floor(x / sqrt(1 + tolerance))`, just below `x`, so that the point after it
can close the bracket. A linear curve therefore needs two points after the two that fix its
slope (plus any climb step `max_step` caps).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import msgspec

from srt_bench.capacity.readings import SearchSpec
from srt_schema.rollup_capacity import CapacityPoint, CapacityStatus

__all__ = ["FAR_OVER", "Bracket", "Measure", "Stop", "build_bracket", "by_value", "decide"]

#: A failing point whose reading is above this many times its limit is far over the target: the
#: search bisects toward it instead of interpolating (simulated hockey-stick and queueing curves
#: need fewer points with 3 than with 2 or 4, docs/telemetry-and-bench.md#capacity-search).
FAR_OVER = 3.0


class Measure(msgspec.Struct, frozen=True, kw_only=True):
    #: The next point on the search's axis (`SearchSpec.value_of`): a concurrency, or a level of
    #: the rate grid.
    value: int
    why: str


class Stop(msgspec.Struct, frozen=True, kw_only=True):
    status: CapacityStatus
    why: str


class Bracket(msgspec.Struct, frozen=True, kw_only=True):
    #: The highest passing value below `hi` (None: none passed).
    lo: int | None
    #: The lowest failing value (None: none failed).
    hi: int | None


def build_bracket(spec: SearchSpec, points: Sequence[CapacityPoint]) -> Bracket:
    failing = [spec.value_of(p) for p in points if not p.meets]
    hi = min(failing) if failing else None
    passing = [
        spec.value_of(p) for p in points if p.meets and (hi is None or spec.value_of(p) < hi)
    ]
    return Bracket(lo=max(passing) if passing else None, hi=hi)


def by_value(spec: SearchSpec, points: Sequence[CapacityPoint]) -> dict[int, CapacityPoint]:
    """The points by their value on the search's axis."""
    return {spec.value_of(p): p for p in points}


def _values(point: CapacityPoint) -> dict[str, float | None]:
    return {r.target: r.value_ms for r in point.readings}


def _limits(spec: SearchSpec) -> dict[str, float]:
    return {t.name: t.limit_ms for t in spec.targets}


def _extrapolate(spec: SearchSpec, a: CapacityPoint, b: CapacityPoint) -> float | None:
    """Where the line through the readings at `a` and `b` (`a` below `b`) first reaches a
    target's limit, over every target that rises; None when none rises."""
    va, vb = _values(a), _values(b)
    best: float | None = None
    for name, limit in _limits(spec).items():
        ya, yb = va.get(name), vb.get(name)
        if ya is None or yb is None or yb <= ya:
            continue
        xa, xb = spec.value_of(a), spec.value_of(b)
        x = xa + (limit - ya) / (yb - ya) * (xb - xa)
        best = x if best is None else min(best, x)
    return best


def _misses(spec: SearchSpec, point: CapacityPoint) -> str:
    """What a failing point missed, in one line."""
    if point.overloaded:
        return f"{point.failed} requests failed (overloaded)"
    if point.invalid:
        return "its measurement is invalid (" + "; ".join(point.invalid) + ")"
    limits = _limits(spec)
    parts = []
    for r in point.readings:
        if not r.meets:
            shown = "unmeasured" if r.value_ms is None else f"{r.value_ms:.1f} ms"
            parts.append(f"{r.target} {shown} > {limits[r.target]:g}")
    return ", ".join(parts) or "missed the targets"


def _aim(spec: SearchSpec, lo: int, x: float) -> tuple[int, str]:
    """The point that aims to end the search, given the predicted crossing `x` above `lo`."""
    close = math.floor(lo * (1.0 + spec.tolerance))
    if x <= lo * (1.0 + spec.tolerance):
        return (
            max(lo + 1, close),
            f"predicted crossing {spec.show(x)} is within the tolerance of {spec.show(lo)}",
        )
    below = math.floor(x / math.sqrt(1.0 + spec.tolerance))
    return max(lo + 1, below), f"just below the predicted crossing {spec.show(x)}"


def _interpolate(spec: SearchSpec, a: CapacityPoint, b: CapacityPoint) -> float | str:
    """The crossing between a passing `a` and a failing `b`, on log-log scales, over every
    target `b` misses; or why there is none to trust (then the caller bisects)."""
    va, vb = _values(a), _values(b)
    best: float | None = None
    for name, limit in _limits(spec).items():
        ya, yb = va.get(name), vb.get(name)
        if ya is None or yb is None or yb <= limit:
            continue
        if yb > FAR_OVER * limit:
            return (
                f"{spec.show(spec.value_of(b))} is far over the target "
                f"({name} {yb:.1f} ms > {FAR_OVER:g}x)"
            )
        if ya <= 0 or yb <= ya:
            continue
        share = (math.log(limit) - math.log(ya)) / (math.log(yb) - math.log(ya))
        xa, xb = spec.value_of(a), spec.value_of(b)
        x = xa * (xb / xa) ** share
        best = x if best is None else min(best, x)
    return "no target rises between them" if best is None else best


def _climb(spec: SearchSpec, points: Sequence[CapacityPoint], lo: int) -> Measure:
    cap = max(lo + 1, min(spec.max_value, math.floor(lo * spec.max_step)))
    below = sorted(v for p in points if p.meets and (v := spec.value_of(p)) < lo)
    base = max((c for c in below if 2 * c <= lo), default=below[0] if below else None)
    by_v = by_value(spec, points)
    x = _extrapolate(spec, by_v[base], by_v[lo]) if base is not None else None
    show = spec.show
    if x is None:
        why = (
            "one point so far"
            if base is None
            else f"no target rises between {show(base)} and {show(lo)}"
        )
        return Measure(value=cap, why=f"{why}: step up x{spec.max_step:g} (capped at max)")
    assert base is not None
    target, why = _aim(spec, lo, x)
    if target > cap:
        return Measure(
            value=cap,
            why=f"predicted crossing {show(x)} (extrapolated from {show(base)} and {show(lo)}) "
            f"is beyond one step: step up x{spec.max_step:g} (capped at max)",
        )
    return Measure(value=target, why=f"{why} (extrapolated from {show(base)} and {show(lo)})")


def _bisect(spec: SearchSpec, lo: int, hi: int, why: str) -> Measure:
    mid = min(hi - 1, max(lo + 1, round(math.sqrt(lo * hi))))
    return Measure(value=mid, why=f"bisect [{spec.show(lo)}, {spec.show(hi)}]: {why}")


def _refine(spec: SearchSpec, points: Sequence[CapacityPoint], lo: int, hi: int) -> Measure:
    by_v = by_value(spec, points)
    upper = by_v[hi]
    show = spec.show
    if upper.overloaded:
        return _bisect(
            spec, lo, hi, f"{show(hi)} is overloaded, its latencies are not interpolated"
        )
    if upper.invalid:
        return _bisect(spec, lo, hi, f"{show(hi)} is invalid, its latencies are not interpolated")
    x = _interpolate(spec, by_v[lo], upper)
    if isinstance(x, str):
        return _bisect(spec, lo, hi, x)
    target, why = _aim(spec, lo, x)
    return Measure(
        value=min(hi - 1, target), why=f"{why} (interpolated between {show(lo)} and {show(hi)})"
    )


def decide(spec: SearchSpec, points: Sequence[CapacityPoint]) -> Measure | Stop:
    """The next point to measure, or why the search is over."""
    if not points:
        return Measure(value=spec.min_value, why="the bottom of the range")
    bracket = build_bracket(spec, points)
    lo, hi = bracket.lo, bracket.hi
    show = spec.show
    if lo is None:
        first = by_value(spec, points)[spec.min_value]
        return Stop(
            status="below_min",
            why=f"{spec.bound('min')} {show(spec.min_value)} misses the targets: "
            f"{_misses(spec, first)}",
        )
    if hi is None and lo >= spec.max_value:
        return Stop(status="at_max", why=f"{spec.bound('max')} {show(lo)} meets every target")
    if hi is not None and (hi - lo <= 1 or hi <= lo * (1.0 + spec.tolerance)):
        miss = _misses(spec, by_value(spec, points)[hi])
        return Stop(
            status="found",
            why=f"{show(lo)} meets every target and {show(hi)} does not ({miss}); {show(hi)} is "
            f"within {spec.tolerance:.0%} of {show(lo)}",
        )
    if len(points) >= spec.max_points:
        where = f"between {show(lo)} and {show(hi)}" if hi is not None else f"at least {show(lo)}"
        return Stop(
            status="max_points",
            why=f"max_points {spec.max_points} measured; the capacity is {where}",
        )
    if hi is None:
        return _climb(spec, points, lo)
    return _refine(spec, points, lo, hi)
