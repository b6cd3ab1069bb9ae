"""Readiness probes (tcp, http, log): one attempt, and the wait loop with a liveness check."""

from __future__ import annotations

import re
import socket
from typing import assert_never

import httpx

from srt_planner.plan import HttpProbe, LogProbe, Readiness, TcpProbe
from srt_runtime.errors import ReadinessError
from srt_runtime.supervisor import Proc, Supervisor

__all__ = ["check_probe", "describe_probe", "wait_ready"]

#: One probe attempt never blocks longer than this (the main thread must notice stop requests).
_ATTEMPT_TIMEOUT = 2.0
_LOG_PROBE_MAX_BYTES = 64 * 1024 * 1024


def describe_probe(probe: Readiness) -> str:
    match probe:
        case TcpProbe():
            return f"accept TCP connections on {probe.host}:{probe.port}"
        case HttpProbe():
            return f"answer {probe.status} on http://{probe.host}:{probe.port}{probe.path}"
        case LogProbe():
            return f"print a line matching {probe.pattern!r}"
        case _:
            assert_never(probe)


def check_probe(probe: Readiness, proc: Proc) -> bool:
    """One attempt: is the process ready?"""
    timeout = min(_ATTEMPT_TIMEOUT, probe.interval_seconds)
    match probe:
        case TcpProbe():
            try:
                with socket.create_connection((probe.host, probe.port), timeout=timeout):
                    return True
            except OSError:
                return False
        case HttpProbe():
            url = f"http://{probe.host}:{probe.port}{probe.path}"
            try:
                return httpx.get(url, timeout=timeout).status_code == probe.status
            except httpx.HTTPError:
                return False
        case LogProbe():
            try:
                with proc.log_path.open("rb") as handle:
                    text = handle.read(_LOG_PROBE_MAX_BYTES).decode("utf-8", errors="replace")
            except FileNotFoundError:
                return False
            return re.search(probe.pattern, text, re.MULTILINE) is not None
        case _:
            assert_never(probe)


def wait_ready(sup: Supervisor, proc: Proc) -> None:
    """Poll ``proc``'s probe every ``interval_seconds`` until ready; fail fast if it dies."""
    probe = proc.spec.readiness
    if probe is None:
        return
    deadline = sup.clock.monotonic() + probe.timeout_seconds
    while True:
        if check_probe(probe, proc):
            sup.log.info("%s is ready (%s)", proc.spec.name, describe_probe(probe))
            return
        if proc.done.is_set():
            raise ReadinessError(
                f"{proc.spec.name} exited with code {proc.exit_code} on {proc.node} before it "
                f"became ready (it should {describe_probe(probe)}); see {proc.log_path}",
                process=proc.spec.name,
            )
        remaining = deadline - sup.clock.monotonic()
        if remaining <= 0:
            raise ReadinessError(
                f"{proc.spec.name} on {proc.node} did not {describe_probe(probe)} within "
                f"{probe.timeout_seconds:g} s; see {proc.log_path}",
                process=proc.spec.name,
            )
        sup.wait_for(proc.done.is_set, min(probe.interval_seconds, remaining))
