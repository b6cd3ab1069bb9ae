"""Percentile bootstrap over requests (pure, stdlib only, deterministic for a given seed).

Each run's window is resampled on its own (requests drawn with replacement, as many as it had);
the delta of a statistic between two runs is the difference of their replicates, paired by
replicate number; its 95% interval is the 2.5th and 97.5th percentile of those differences. The
generator of each (run, window, statistic) is seeded from a fixed seed and the names, never from
the order of the arguments, so the same inputs give the same intervals.

ITL percentiles pool every gap of the drawn requests (the rollup's definition). A window with more
gaps than `POOL_BUDGET` is thinned for the resampling only: each request keeps every k-th of its
sorted gaps (the same k for all, so each request keeps its weight), and the replicates are shifted
by the difference between the percentile of every gap and of the kept ones, so that they centre on
the point estimate, which always uses every gap.
"""

from __future__ import annotations

import math
import random
import zlib
from collections.abc import Callable, Sequence
from itertools import chain

from srt_schema.bench_result import percentile

__all__ = [
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "POOL_BUDGET",
    "delta_interval",
    "percentile",
    "percentile_replicates",
    "pooled_percentile_replicates",
    "relative_interval",
    "rng_for",
    "sum_replicates",
]

DEFAULT_SEED = 19
DEFAULT_RESAMPLES = 1000
#: At most this many pooled gaps per ITL replicate (see the module docstring).
POOL_BUDGET = 4000


def rng_for(seed: int, *names: object) -> random.Random:
    """A generator seeded from the seed and the names (stable across runs and platforms)."""
    key = ":".join(str(n) for n in (seed, *names)).encode()
    return random.Random(zlib.crc32(key))


def _replicates(
    rng: random.Random, resamples: int, draw: Callable[[random.Random], tuple[float, ...]]
) -> list[tuple[float, ...]]:
    return [draw(rng) for _ in range(resamples)]


def _order_statistic(ordered: Sequence[float], u: float) -> float:
    """The resample value at uniform order statistic `u`: the empirical quantile function."""
    n = len(ordered)
    return ordered[min(n - 1, max(0, math.ceil(n * u) - 1))]


def percentile_replicates(
    values: Sequence[float], ps: Sequence[float], *, rng: random.Random, resamples: int
) -> list[tuple[float, ...]]:
    """Per replicate, the percentiles `ps` of a resample of `values` (one per request).

    Drawn without building the resample: a resample of n values is the empirical quantile
    function at n uniforms, so its k-th smallest value is that function at the k-th smallest of
    n uniforms, which is Beta(k, n - k + 1); the next one is that plus (1 - it) x Beta(1, n - k).
    Each percentile needs those two order statistics (linear interpolation), so a replicate costs
    the same for 40 requests as for 4,000, and its distribution is exactly the resample's.
    """
    n = len(values)
    if n == 0:
        return []
    ordered = sorted(values)
    ranks = []
    for p in ps:
        rank = (n - 1) * p / 100.0
        lo = math.floor(rank)
        ranks.append((lo + 1, rank - lo))  # 1-based order of the lower neighbour, weight

    def draw(r: random.Random) -> tuple[float, ...]:
        out = []
        for k, frac in ranks:
            u = r.betavariate(k, n - k + 1)
            low = _order_statistic(ordered, u)
            if frac == 0.0 or k >= n:
                out.append(low)
                continue
            u_next = u + (1.0 - u) * r.betavariate(1, n - k)
            out.append(low + (_order_statistic(ordered, u_next) - low) * frac)
        return tuple(out)

    return _replicates(rng, resamples, draw)


def pooled_percentile_replicates(
    groups: Sequence[Sequence[float]],
    ps: Sequence[float],
    *,
    rng: random.Random,
    resamples: int,
    budget: int = POOL_BUDGET,
    pooled: Sequence[float] | None = None,
) -> list[tuple[float, ...]]:
    """Per replicate, the percentiles of the pooled values of a resample of the groups (one
    group per request: its sorted gaps). `pooled`: every value, sorted, if the caller has it."""
    total = sum(len(g) for g in groups)
    if total == 0:
        return []
    step = max(1, math.ceil(total / budget))
    thinned = [list(g[step // 2 :: step]) if step > 1 else list(g) for g in groups]
    n = len(thinned)
    shift = [0.0] * len(ps)
    if step > 1:
        # Centre the replicates on the estimate from every gap: thinning moves a percentile a
        # little, and the interval of a delta must not inherit that offset.
        full = pooled if pooled is not None else sorted(chain.from_iterable(groups))
        kept = sorted(chain.from_iterable(thinned))
        shift = [percentile(full, p) - percentile(kept, p) for p in ps]

    def draw(r: random.Random) -> tuple[float, ...]:
        pooled = sorted(chain.from_iterable(r.choices(thinned, k=n)))
        if not pooled:
            return tuple(math.nan for _ in ps)
        return tuple(percentile(pooled, p) + d for p, d in zip(ps, shift, strict=True))

    return _replicates(rng, resamples, draw)


def sum_replicates(
    values: Sequence[float], scale: float, *, rng: random.Random, resamples: int
) -> list[tuple[float, ...]]:
    """Per replicate, the sum of a resample of `values` times `scale` (tokens / duration)."""
    n = len(values)
    if n == 0:
        return []
    return _replicates(rng, resamples, lambda r: (math.fsum(r.choices(values, k=n)) * scale,))


def delta_interval(
    baseline: Sequence[float], other: Sequence[float], *, confidence: float = 0.95
) -> tuple[float, float] | None:
    """The central `confidence` interval of `other[b] - baseline[b]` over replicates `b`."""
    diffs = sorted(
        o - a
        for a, o in zip(baseline, other, strict=False)
        if math.isfinite(a) and math.isfinite(o)
    )
    if len(diffs) < 2:
        return None
    tail = (1.0 - confidence) / 2.0 * 100.0
    return percentile(diffs, tail), percentile(diffs, 100.0 - tail)


def relative_interval(
    baseline: Sequence[float], other: Sequence[float], *, confidence: float = 0.95
) -> tuple[float, float] | None:
    """The central `confidence` interval of the relative change `other[b] / baseline[b] - 1`, in
    percent, over replicates `b` with a positive baseline. Each replicate's change is computed on
    its own ratio, so for non-negative KPIs no bound can fall below -100% (the absolute
    interval divided by the point estimate's baseline can)."""
    changes = sorted(
        (o / a - 1.0) * 100.0
        for a, o in zip(baseline, other, strict=False)
        if math.isfinite(a) and math.isfinite(o) and a > 0
    )
    if len(changes) < 2:
        return None
    tail = (1.0 - confidence) / 2.0 * 100.0
    return percentile(changes, tail), percentile(changes, 100.0 - tail)
