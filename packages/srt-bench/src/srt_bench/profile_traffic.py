"""Traffic that covers a timed Nsight capture (docs/telemetry-and-bench.md#profiling).

With ``profiling.type: nsys-time`` every worker is captured from ``delay_secs`` after it started
for ``duration_secs``, whatever the benchmark is doing then; ``profiling.benchmark_duration_secs``
is how long the benchmark must keep the deployment busy. When sa-bench's own phases end sooner,
:func:`keep_traffic` sends more rounds of requests at the last phase's concurrency until that
much time has passed since the benchmark's first request. These requests are not measured: no
result file, no window, no rollup row; ``ProfilingControl.traffic_record`` gets a JSON summary
(rounds, requests, failures, the seconds the traffic lasted), so the lengthening can be seen.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import msgspec

from srt_bench.client import PreparedRequest, StreamClient
from srt_bench.loadgen import run_phase
from srt_bench.profile_control import ProfilingControl

__all__ = ["TrafficSummary", "keep_traffic"]

Log = Callable[[str], None]


class TrafficSummary(msgspec.Struct, frozen=True, kw_only=True):
    """What :func:`keep_traffic` did (written to ``traffic_record``)."""

    #: ``profiling.benchmark_duration_secs``.
    target_seconds: float
    #: Seconds of traffic before the extra rounds (the measured phases), on the bench's clock.
    phases_seconds: float
    #: Seconds of traffic in all, extra rounds included.
    total_seconds: float
    rounds: int
    requests: int
    failed: int
    concurrency: int


async def keep_traffic(
    control: ProfilingControl | None,
    client: StreamClient,
    make_requests: Callable[[int, int], Sequence[PreparedRequest]],
    *,
    concurrency: int,
    per_round: int,
    rate: float,
    origin: float,
    seed: int,
    log: Log,
    monotonic: Callable[[], float] = time.monotonic,
) -> TrafficSummary | None:
    """Send rounds of ``per_round`` requests until ``control.traffic_seconds`` passed since
    ``origin`` (a ``monotonic()`` reading). A round where every request failed ends it early
    (the deployment is gone; the benchmark's own result already says so). None when the
    control asks for no minimum traffic duration."""
    if control is None or control.traffic_seconds is None:
        return None
    target = control.traffic_seconds
    phases = monotonic() - origin
    rounds = sent = failed = 0
    while monotonic() - origin < target:
        batch = list(make_requests(per_round, seed + rounds))
        run = await run_phase(client, batch, concurrency=concurrency, rate=rate, seed=seed)
        rounds += 1
        sent += len(run.records)
        lost = sum(1 for r in run.records if not r.success)
        failed += lost
        if run.records and lost == len(run.records):
            log(f"profiling traffic: every request of round {rounds} failed; stopping it")
            break
    summary = TrafficSummary(
        target_seconds=target,
        phases_seconds=round(phases, 3),
        total_seconds=round(monotonic() - origin, 3),
        rounds=rounds,
        requests=sent,
        failed=failed,
        concurrency=concurrency,
    )
    if rounds:
        log(
            f"profiling traffic: the measured phases lasted {phases:.1f}s of the "
            f"{target:g}s profiling.benchmark_duration_secs; {sent} more requests in {rounds} "
            f"round(s) at concurrency {concurrency} (not measured)"
        )
    if control.traffic_record is not None:
        path = Path(control.traffic_record)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(msgspec.json.format(msgspec.json.encode(summary), indent=2) + b"\n")
    return summary
