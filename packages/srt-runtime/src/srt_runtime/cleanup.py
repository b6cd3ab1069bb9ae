"""Stopping everything a run started, in tiers (the host teardown is ``teardown.py``).

Tiers: ``stop_tier`` ascending, and within a tier by kind (benchmark, telemetry, frontends and
proxies, workers, services). Each tier gets SIGTERM in reverse start order without waiting, then
each process its ``stop_grace_seconds`` before the launcher's escalation; a tier is fully stopped
before the next is signalled. Waits here are real time: processes exit in real time.
"""

from __future__ import annotations

import itertools
import signal
import time
from collections.abc import Sequence

from srt_planner.plan import ProcessKind
from srt_runtime.process import Proc
from srt_runtime.supervisor import Supervisor

__all__ = ["KIND_RANK", "stop_all", "stop_group"]

KIND_RANK: dict[ProcessKind, int] = {
    "benchmark": 0,
    "telemetry": 1,
    "frontend": 2,
    "proxy": 2,
    "worker": 3,
    "service": 4,
}
_KILL_WAIT = 10.0


def _tier(proc: Proc) -> tuple[int, int]:
    return proc.spec.stop_tier, KIND_RANK[proc.spec.kind]


def stop_group(sup: Supervisor, group: Sequence[Proc]) -> None:
    """SIGTERM every process of ``group`` (reverse order, no wait), then give each its
    ``stop_grace_seconds`` before SIGKILL; never raises."""
    signalled = time.monotonic()
    for proc in reversed(group):
        proc.stopping = True
        proc.handle.signal(signal.SIGTERM)
    for proc in group:
        left = signalled + proc.spec.stop_grace_seconds - time.monotonic()
        if not proc.done.wait(max(0.0, left)):
            sup.log.warning(
                "%s on %s did not stop within %g s of SIGTERM; killing it",
                proc.spec.name,
                proc.node,
                proc.spec.stop_grace_seconds,
            )
            proc.handle.kill()
            if not proc.done.wait(_KILL_WAIT):
                sup.log.error(
                    "%s on %s survived SIGKILL (pid %d)",
                    proc.spec.name,
                    proc.node,
                    proc.handle.pid,
                )


def stop_all(sup: Supervisor) -> None:
    """Stop every running process of the run, tier by tier; never raises."""
    sup.cleaning = True
    running = sorted(sup.running(), key=lambda p: (_tier(p), p.seq))
    for tier, members in itertools.groupby(running, key=_tier):
        group = list(members)
        sup.log.info("Stopping tier %s: %s", tier, ", ".join(p.spec.name for p in group))
        stop_group(sup, group)
    for proc in sup.procs:
        proc.handle.release()
