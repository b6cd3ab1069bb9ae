"""Latency targets a run declared, and the lines they become on our charts (pure).

Where from: a capacity search's `benchmark.capacity.targets`, which srt-bench writes into the
rollup as `capacity.targets[]` (`name`, `metric` ttft/tpot/itl/e2el, `percentile`, `limit_ms`;
`srt_schema.rollup_capacity.CapacityTarget`; `tests/test_contract.py` holds `TargetView` equal).
The goodput thresholds (`ttft_threshold_ms`, `itl_threshold_ms`) are not recorded in the result or
rollup files, so no page draws them.

Which chart gets which line (`TargetLine`: a vertical `x` or horizontal `y` line and its label):
- a chart of one metric's percentiles in ms (the dashboard's p50/p90/p99 bars): a `y` line per
  target of that metric ("target p99 <= 500 ms");
- a chart whose x axis is one metric in ms (the sweep report's TTFT p50 and E2E mean curves): an
  `x` line per target of that metric, its percentile named in the label;
- a chart whose x axis is tok/s per user (1000 / TPOT: the Pareto charts): an `x` line at
  1000 / limit per TPOT target ("TPOT p99 <= 40 ms = 25 tok/s/user"): a point left of it has a
  TPOT (the axis's statistic) above the limit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import msgspec

__all__ = [
    "TargetLine",
    "TargetView",
    "decode_targets",
    "metric_lines",
    "metric_x_lines",
    "per_user_lines",
]

METRIC_NAMES = {"ttft": "TTFT", "tpot": "TPOT", "itl": "ITL", "e2el": "E2EL"}


class TargetView(msgspec.Struct, frozen=True, kw_only=True):
    """One capacity target as the rollup writes it."""

    name: str
    metric: str
    percentile: float
    limit_ms: float

    @property
    def text(self) -> str:
        """`TTFT p99 <= 500 ms`."""
        return f"{METRIC_NAMES.get(self.metric, self.metric)} {self.stat} <= {self.limit_ms:g} ms"

    @property
    def stat(self) -> str:
        return f"p{self.percentile:g}"


class _Capacity(msgspec.Struct, frozen=True, kw_only=True):
    targets: tuple[TargetView, ...] = ()


class _Doc(msgspec.Struct, frozen=True, kw_only=True):
    capacity: _Capacity | None = None


def decode_targets(data: bytes) -> tuple[TargetView, ...]:
    """The rollup's capacity targets (none without a capacity search); raises msgspec's errors."""
    doc = msgspec.json.decode(data, type=_Doc)
    return doc.capacity.targets if doc.capacity is not None else ()


@dataclass(frozen=True)
class TargetLine:
    axis: Literal["x", "y"]
    value: float
    label: str


def _unique(targets: Iterable[TargetView]) -> list[TargetView]:
    return sorted(set(targets), key=lambda t: (t.metric, t.percentile, t.limit_ms))


def metric_lines(targets: Sequence[TargetView], metric: str) -> list[TargetLine]:
    """Horizontal lines on a chart of `metric`'s percentiles (ms)."""
    return [
        TargetLine("y", t.limit_ms, f"target {t.stat} <= {t.limit_ms:g} ms")
        for t in _unique(targets)
        if t.metric == metric
    ]


def metric_x_lines(targets: Sequence[TargetView], metric: str) -> list[TargetLine]:
    """Vertical lines on a chart whose x axis is `metric` in ms."""
    return [
        TargetLine("x", t.limit_ms, f"target {t.text}")
        for t in _unique(targets)
        if t.metric == metric
    ]


def per_user_lines(targets: Sequence[TargetView]) -> list[TargetLine]:
    """Vertical lines on a chart whose x axis is tok/s per user (1000 / TPOT)."""
    return [
        TargetLine(
            "x", 1000.0 / t.limit_ms, f"target {t.text} = {1000.0 / t.limit_ms:.3g} tok/s/user"
        )
        for t in _unique(targets)
        if t.metric == "tpot" and t.limit_ms > 0
    ]
