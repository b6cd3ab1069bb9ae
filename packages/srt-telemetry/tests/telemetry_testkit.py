"""Helpers shared by srt-telemetry's tests (a uniquely named module: every package's tests run in
one pytest session under --import-mode=importlib, where `conftest` and `fakes` would collide)."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path
from types import ModuleType

import httpx
import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
DATA = HERE / "data"


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_http(url: str, timeout: float = 60.0) -> None:  # a hang guard (docs/testing.md)
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"{url} did not answer 200 within {timeout} s")
        time.sleep(0.05)


def prometheus_parser() -> ModuleType:
    """prometheus-client's parser; only the alone run (SRT_ALONE=1) may lack it."""
    if os.environ.get("SRT_ALONE") == "1":
        return pytest.importorskip("prometheus_client.parser")
    import prometheus_client.parser

    return prometheus_client.parser
