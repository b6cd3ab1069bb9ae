"""Options and fixtures shared by every package's tests (pytest's root conftest)."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite golden files instead of comparing them (review the diff before committing)",
    )
