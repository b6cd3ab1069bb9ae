"""A small budget of our recipe fuzzer (``benchmarks/fuzz_recipes.py``) as a property test: seeded
mutations of real recipes are loaded and planned; none may end in a traceback, a hang, a memory
blow-up, an error without a ``$.path``, a message over 2 kB, or an absurd size accepted."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from fuzz_recipes import FINDINGS, fuzz  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("seed", [7, 8])
def test_mutated_recipes_are_refused_cleanly(seed: int) -> None:
    """Mutations of our own recipes (examples/, tests/recipes/), and of the public corpus when it
    is there."""
    report = fuzz(600, seed, hang=10.0)
    found = {f: report.counts[f] for f in FINDINGS if report.counts[f]}
    shown = "\n".join(e for f in found for e in report.examples.get(f, []))
    assert not found, f"{found}\n{shown}"
    # The mutations must reach both sides of the promise, or the test proves nothing.
    assert report.counts["refused"] > 300 and report.counts["loaded"] > 30, report.counts
