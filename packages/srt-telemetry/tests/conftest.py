from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
DATA = HERE / "data"
sys.path.insert(0, str(HERE))  # so `fakes` imports in --import-mode=importlib


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The shared capture corpus (`SRT_CORPUS`, default `<repo>/../shared/corpus`)."""
    root = Path(os.environ.get("SRT_CORPUS", str(REPO.parent / "shared" / "corpus")))
    if not (root / "metrics" / "dcgm-gb200.txt").is_file():
        msg = f"shared corpus not found at {root}; set SRT_CORPUS"
        if in_ci():
            pytest.fail(msg)
        pytest.skip(msg)
    return root


@pytest.fixture(scope="session")
def dcgm_text(corpus: Path) -> str:
    return (corpus / "metrics" / "dcgm-gb200.txt").read_text()


@pytest.fixture(scope="session")
def node_text(corpus: Path) -> str:
    return (corpus / "metrics" / "node-exporter-gb200.txt").read_text()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_http(url: str, timeout: float = 10.0) -> None:
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


@pytest.fixture
def node_exporter() -> Iterator[str]:
    """A real prometheus-node-exporter on a free loopback port; yields its /metrics URL."""
    binary = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
    if binary is None:
        msg = (
            "prometheus-node-exporter is not installed "
            "(apt-get install -y prometheus-node-exporter)"
        )
        if in_ci():
            pytest.fail(msg)
        pytest.skip(msg)
    port = free_port()
    proc = subprocess.Popen(
        [binary, f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        wait_http(url)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def prometheus_parser():  # type: ignore[no-untyped-def]
    """prometheus-client's parser; only the alone run (SRT_ALONE=1) may lack it."""
    if os.environ.get("SRT_ALONE") == "1":
        return pytest.importorskip("prometheus_client.parser")
    import prometheus_client.parser

    return prometheus_client.parser


@pytest.fixture
def spawn() -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Start `python -m srt_telemetry ARGS` processes that are always reaped at teardown (so a
    failing assertion never leaves a process behind)."""
    procs: list[subprocess.Popen[str]] = []

    def start(*args: str, quiet: bool = False) -> subprocess.Popen[str]:
        out = subprocess.DEVNULL if quiet else subprocess.PIPE
        proc = subprocess.Popen(
            [sys.executable, "-m", "srt_telemetry", *args], stdout=out, stderr=out, text=True
        )
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)
