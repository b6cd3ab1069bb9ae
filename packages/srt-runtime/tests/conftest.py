"""Fixtures of the srt_runtime tests: a JobPlan factory, job directories, and a guard that no
process started by a test outlives it."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
FAKES = HERE / "fakes"
sys.path.insert(0, str(FAKES))  # `rt_fakes` under --import-mode=importlib (unique module name)
# The reporting fakes (collector, S3, AI servers) serve tests outside reporting/ too.
sys.path.insert(0, str(HERE / "reporting" / "fakes"))

MARKER = "SRT_RUNTIME_TEST_MARKER"
_STRIP = ("SLURM_", "SRTCTL_", "AWS_", "RUN_EVAL", "EVAL_ONLY", "EVAL_CONC")


def _pids_with(marker: str) -> list[int]:
    needle = f"{MARKER}={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            try:
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state != "Z":
                found.append(int(entry.name))
    return found


@pytest.fixture(autouse=True)
def no_leftover_processes(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Every child of the test inherits a per-test marker; none may be alive afterwards."""
    for key in list(os.environ):
        if key.startswith(_STRIP) or key == "CUDA_VISIBLE_DEVICES":
            monkeypatch.delenv(key)
    marker = uuid.uuid4().hex
    monkeypatch.setenv(MARKER, marker)
    yield marker
    left = _pids_with(marker)
    deadline = time.monotonic() + 30.0  # hang guard: a just-killed process may still be exiting
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = _pids_with(marker)
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert not left, f"processes left behind by the test: {left}"


@pytest.fixture
def job_dir(tmp_path: Path) -> Path:
    path = tmp_path / "outputs" / "4242"
    (path / "logs").mkdir(parents=True)
    return path


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    """A file scripted processes append ``<name> start|term|served <path>`` lines to."""
    path = tmp_path / "trace.txt"
    path.touch()
    return path
