"""Does the sa-bench client's `LoopMonitor` (srt_bench.client_load) see a busy event loop on this
machine? A loop held 60 ms at a time, five times, once blocked without CPU (`time.sleep`) and once
computing (a spin), with the real clocks: printed per case the probes, the p50/p99/max lag and
the CPU share. A held loop shows a p99 lag near the 60 ms hold (more on a loaded machine), and
the spinning case a CPU share well above the blocked one. This was a unit test's real-time claim
(docs/testing.md): tests/test_validity.py now checks the monitor's arithmetic on a fake clock.

    uv run --frozen python benchmarks/loop_monitor.py [--hold-ms 60] [--repeats 5]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from srt_bench.client_load import LoopMonitor
from srt_schema.rollup import ClientLoad


async def _held(spin: bool, hold_s: float, repeats: int) -> ClientLoad:
    async with LoopMonitor() as monitor:
        for _ in range(repeats):
            await asyncio.sleep(0.02)
            until = time.perf_counter() + hold_s
            if spin:
                while time.perf_counter() < until:  # the loop computes: CPU, and late
                    pass
            else:
                time.sleep(hold_s)  # the loop is blocked without CPU: only late
    assert monitor.load is not None
    return monitor.load


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hold-ms", type=float, default=60.0)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"{'case':<9} {'probes':>6} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'cpu share':>9}")
    for name, spin in (("blocked", False), ("spinning", True)):
        load = asyncio.run(_held(spin, args.hold_ms / 1000.0, args.repeats))
        print(
            f"{name:<9} {load.lag_samples:>6} {load.loop_lag_p50_ms or 0:>8.1f} "
            f"{load.loop_lag_p99_ms or 0:>8.1f} {load.loop_lag_max_ms or 0:>8.1f} "
            f"{load.cpu_share or 0:>9.2f}"
        )


if __name__ == "__main__":
    main()
