from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from srt_bench.testing import write_tiny_model


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield write_tiny_model(tmp_path_factory.mktemp("tiny-model"))


@pytest.fixture
def quiet_gc() -> Iterator[None]:
    """No garbage collection while a test times an in-process server to the millisecond.

    The test server and client share this process, and so its heap, with every test that ran
    before: a full collection of it stalls both for tens to hundreds of milliseconds (CI once saw
    a 60 ms first token arrive after 346 ms), which is the host's pause, not the schedule's."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
