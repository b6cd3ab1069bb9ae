"""Fixtures of the repository-level tests: `browser`, the browser tier (tests/browser.py).

Without Chromium the tests that use `browser` are skipped with one line saying what to install;
when `CI=true` they fail instead (CI installs it with .ci/install-system.sh). The screenshots a
session took are listed at the end of the run (they stay under each test's job folder).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # `browser` under --import-mode=importlib

from browser import REQUIRED, SKIP_LINE, Browser, find_chromium

CHROMIUM = find_chromium()


def pytest_runtest_setup(item: pytest.Item) -> None:
    # Raised here, not in the fixture, so that pytest folds every such skip into one line.
    if CHROMIUM is None and not REQUIRED and "browser" in getattr(item, "fixturenames", ()):
        pytest.skip(SKIP_LINE)


@pytest.fixture(scope="session")
def browser(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Browser]:
    if CHROMIUM is None:
        if REQUIRED:
            pytest.fail(SKIP_LINE.replace("browser tier skipped", "browser tier FAILED (CI=true)"))
        pytest.skip(SKIP_LINE)
    b = Browser(CHROMIUM, tmp_path_factory.mktemp("chromium"))
    yield b
    lines = getattr(request.config, "srt_summary_lines", None)
    if lines is not None:
        for page in b.rendered:
            shots = ", ".join(str(p) for p in page.screenshots)
            lines.append(f"browser: {page.name}: {shots}")
