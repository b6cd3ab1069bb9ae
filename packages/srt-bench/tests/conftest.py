from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from srt_bench.testing import write_tiny_model


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield write_tiny_model(tmp_path_factory.mktemp("tiny-model"))
