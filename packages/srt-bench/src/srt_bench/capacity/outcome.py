"""What a finished capacity search found, with its confidence statement (pure)."""

from __future__ import annotations

from collections.abc import Sequence

from srt_bench.capacity.readings import SearchSpec
from srt_bench.capacity.search import Stop, build_bracket, by_value
from srt_schema.rollup_capacity import CapacityPoint, CapacityResult, TargetReading

__all__ = ["build_capacity_result", "format_point"]


def _ms(value: float | None) -> str:
    return "?" if value is None else f"{value:.1f}"


def _reading(r: TargetReading, limit: float) -> str:
    if r.value_ms is None:
        return f"{r.target} unmeasured"
    sign = "<=" if r.meets else ">"
    return (
        f"{r.target} {r.value_ms:.1f} ms (95% CI {_ms(r.ci_low_ms)}-{_ms(r.ci_high_ms)}, "
        f"n={r.samples}) {sign} {limit:g}"
    )


def format_point(spec: SearchSpec, point: CapacityPoint) -> str:
    """One line per point: its verdict and every reading. An invalid point says so, and why:
    it counts as a miss whatever its readings."""
    limits = {t.name: t.limit_ms for t in spec.targets}
    verdict = "meets the targets" if point.meets else "misses"
    if point.invalid:
        verdict = f"is invalid ({'; '.join(point.invalid)}), so it counts as a miss"
    parts = [_reading(r, limits[r.target]) for r in point.readings]
    if point.overloaded:
        parts.append(f"{point.failed} of {point.completed + point.failed} requests failed")
    return f"{spec.point_name(spec.value_of(point))} {verdict}: " + "; ".join(parts)


def _clearly_under(spec: SearchSpec, point: CapacityPoint) -> bool:
    limits = {t.name: t.limit_ms for t in spec.targets}
    return point.meets and all(
        r.ci_high_ms is not None and r.ci_high_ms <= limits[r.target] for r in point.readings
    )


def _clearly_over(spec: SearchSpec, point: CapacityPoint) -> bool:
    limits = {t.name: t.limit_ms for t in spec.targets}
    return point.overloaded or any(
        r.ci_low_ms is not None and r.ci_low_ms > limits[r.target] for r in point.readings
    )


def build_capacity_result(
    spec: SearchSpec, points: Sequence[CapacityPoint], stop: Stop
) -> CapacityResult:
    """The rollup's `capacity` block: the answer, every point, and how sure it is."""
    bracket = build_bracket(spec, points)
    by_v = by_value(spec, points)
    lo = by_v[bracket.lo] if bracket.lo is not None else None
    hi = by_v[bracket.hi] if bracket.hi is not None else None
    show = spec.show
    lines: list[str] = []
    if lo is not None:
        lines.append(format_point(spec, lo))
    if hi is not None:
        lines.append(format_point(spec, hi))
    if lo is None:
        confident = hi is not None and _clearly_over(spec, hi)
        head = f"no capacity in [{show(spec.min_value)}, {show(spec.max_value)}]"
    elif hi is None:
        confident = _clearly_under(spec, lo)
        head = f"capacity at least {show(spec.value_of(lo))}"
    else:
        confident = _clearly_under(spec, lo) and _clearly_over(spec, hi)
        head = (
            f"capacity {show(spec.value_of(lo))} (next point up {show(spec.value_of(hi))} misses)"
        )
    sure = "confident" if confident else "not confident (a 95% interval crosses a limit)"
    on_rate = spec.axis == "request_rate"
    return CapacityResult(
        status=stop.status,
        capacity=None if on_rate else bracket.lo,
        next_up=None if on_rate else bracket.hi,
        axis=spec.axis,
        capacity_request_rate=lo.request_rate if on_rate and lo is not None else None,
        next_up_request_rate=hi.request_rate if on_rate and hi is not None else None,
        targets=spec.targets,
        points=tuple(points),
        stopped=stop.why,
        confident=confident,
        statement=f"{head}, {sure}: " + " | ".join(lines),
    )
