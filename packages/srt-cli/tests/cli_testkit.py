"""Helpers shared by srt-cli tests (imported by name; conftest puts this folder on sys.path)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from click.testing import Result

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
FAKES = HERE / "fakes"
PACKAGE = HERE.parent
REPO = PACKAGE.parents[1]

Invoke = Callable[..., Result]
