"""How many points the capacity search (`srt_bench.capacity.search.decide`) measures, and whether
it is ever wrong, on simulated latency curves over concurrencies 1..1,024.

Each family draws 1,500 curves from a fixed seed (the curves whose true capacity is inside the
range are kept): `hockey1` flat then linear past a knee, `hockeyp` flat then a power 1-2.5,
`power` a power law 0.5-2.5 from the start, `mm1` a queue that blows up at a random capacity.
A point reads the curve exactly. Printed per family: the share found within 5% in at most 8 and
10 points, the median and 90th percentile of points, and answers outside 5% of the truth (must
be 0). docs/telemetry-and-bench.md#capacity-search quotes the result.

    uv run --frozen python benchmarks/capacity_search.py
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from srt_bench.capacity import Stop, build_capacity_result, build_search_spec, decide
from srt_schema.recipe import CapacitySearchConfig, CapacityTargets
from srt_schema.rollup_capacity import CapacityPoint, CapacityResult, TargetReading

Curve = Callable[[int], float]
TOP = 1024


def _family(rng: random.Random, kind: str) -> tuple[Curve, float]:
    base, limit = rng.uniform(1, 50), rng.uniform(60, 2000)
    if kind == "mm1":
        cap = rng.uniform(20, 1100)
        return (lambda c: base / (1 - c / cap) if c < cap else 1e6), max(limit, base * 1.5)
    knee = 0 if kind == "power" else rng.randint(0, 600)
    low = {"hockey1": 0.05, "hockeyp": 0.001, "power": 0.001}[kind]
    slope = math.exp(rng.uniform(math.log(low), math.log(20)))
    power = {"hockey1": 1.0, "hockeyp": rng.uniform(1, 2.5), "power": rng.uniform(0.5, 2.5)}[kind]
    return (lambda c: base + slope * max(0, c - knee) ** power), limit


def _search(curve: Curve, limit: float) -> CapacityResult:
    spec = build_search_spec(CapacitySearchConfig(targets=CapacityTargets(ttft_p99_ms=limit)))
    points: list[CapacityPoint] = []
    while True:
        decision = decide(spec, points)
        if isinstance(decision, Stop):
            return build_capacity_result(spec, points, decision)
        c, value = decision.value, curve(decision.value)
        reading = TargetReading(
            target="ttft_p99_ms",
            value_ms=value,
            ci_low_ms=value,
            ci_high_ms=value,
            samples=1000,
            meets=value <= limit,
        )
        points.append(
            CapacityPoint(
                concurrency=c,
                meets=value <= limit,
                overloaded=False,
                completed=1000,
                failed=0,
                readings=(reading,),
                why=decision.why,
                result_path="-",
            )
        )


def main() -> None:
    for kind in ("hockey1", "hockeyp", "power", "mm1"):
        rng = random.Random(7)
        counts: list[int] = []
        wrong = 0
        for _ in range(1500):
            curve, limit = _family(rng, kind)
            truth = max((c for c in range(1, TOP + 1) if curve(c) <= limit), default=0)
            if truth in (0, TOP):
                continue
            result = _search(curve, limit)
            if result.status == "found":
                assert result.capacity is not None
                wrong += not truth / 1.05 <= result.capacity <= truth
                counts.append(len(result.points))
            else:
                counts.append(10**6)
        counts.sort()
        n = len(counts)
        print(
            f"{kind:8} curves {n:5}  found in <=8 points {sum(c <= 8 for c in counts) / n:6.1%}"
            f"  <=10 {sum(c <= 10 for c in counts) / n:6.1%}  median {counts[n // 2]}"
            f"  p90 {counts[int(0.9 * n)]}  wrong {wrong}"
        )


if __name__ == "__main__":
    main()
