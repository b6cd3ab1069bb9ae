"""Fixtures of the reporting tests: the fakes directory on sys.path (unique module names)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "fakes"))
