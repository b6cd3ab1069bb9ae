"""Waiting for a process's readiness probe, with a liveness check after every failed attempt."""

from __future__ import annotations

from functools import partial

from srt_runtime.errors import ReadinessError
from srt_runtime.probe_check import check_probe, describe_probe
from srt_runtime.process import Proc
from srt_runtime.supervisor import Supervisor

__all__ = ["wait_ready"]


def _changed(sup: Supervisor, proc: Proc) -> bool:
    """``proc`` was replaced by a relaunch, or died with no relaunch coming."""
    if sup.latest(proc.base.name) is not proc:
        return True
    return proc.done.is_set() and not sup.restart_pending(proc)


def wait_ready(sup: Supervisor, proc: Proc) -> None:
    """Poll the probe every ``interval_seconds`` until ready; fail fast if the process dies.

    A process whose restart policy relaunches it is followed to its relaunch (``<name>_r<n>``)
    within the same deadline; it only fails here when it dies for good.
    """
    probe = proc.spec.readiness
    if probe is None:
        return
    deadline = sup.clock.monotonic() + probe.timeout_seconds
    current = proc
    while True:
        if check_probe(probe, current.log_path):
            sup.log.info("%s is ready (%s)", current.spec.name, describe_probe(probe))
            sup.record("ready", current)
            return
        latest = sup.latest(proc.base.name)
        if latest is not current:
            current = latest
            continue
        if current.done.is_set() and not sup.restart_pending(current):
            raise ReadinessError(
                f"{current.spec.name} exited with code {current.exit_code} on {current.node} "
                f"before it became ready (it should {describe_probe(probe)}); see "
                f"{current.log_path}",
                process=current.spec.name,
            )
        remaining = deadline - sup.clock.monotonic()
        if remaining <= 0:
            raise ReadinessError(
                f"{current.spec.name} on {current.node} did not {describe_probe(probe)} within "
                f"{probe.timeout_seconds:g} s; see {current.log_path}",
                process=current.spec.name,
            )
        sup.wait_for(partial(_changed, sup, current), min(probe.interval_seconds, remaining))
