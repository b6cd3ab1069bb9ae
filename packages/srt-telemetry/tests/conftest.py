from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # telemetry_testkit, telemetry_fakes

from telemetry_testkit import REPO, free_port, in_ci, wait_http

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test of this package that uses the capture corpus (directly or through ``dcgm_text`` /
    ``node_text``) belongs to the corpus tier."""
    for item in items:
        if item.path.is_relative_to(HERE) and "corpus" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.corpus)


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
