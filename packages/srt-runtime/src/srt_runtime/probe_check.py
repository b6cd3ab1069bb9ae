"""One readiness-probe attempt (tcp, http, log) and its description for messages."""

from __future__ import annotations

import re
import socket
from pathlib import Path
from typing import assert_never

import httpx

from srt_planner.plan import HttpProbe, LogProbe, Readiness, TcpProbe

__all__ = ["check_probe", "describe_probe"]

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


def check_probe(probe: Readiness, log_path: Path) -> bool:
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
                with log_path.open("rb") as handle:
                    text = handle.read(_LOG_PROBE_MAX_BYTES).decode("utf-8", errors="replace")
            except FileNotFoundError:
                return False
            return re.search(probe.pattern, text, re.MULTILINE) is not None
        case _:
            assert_never(probe)
