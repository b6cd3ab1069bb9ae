"""A small budget of our recipe fuzzer (``benchmarks/fuzz_recipes.py``) as a property test: seeded
mutations of real recipes are loaded and planned; none may end in a traceback, a hang, a memory
blow-up, an error without a ``$.path``, a message over 2 kB, or an absurd value accepted (a node
count, a text over its bound, a path, image, precision, GPU type or time limit in the wrong form,
too many concurrency levels: ``fuzz_recipes.absurd_field``). Several seeds, a small budget each."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from fuzz_recipes import FINDINGS, fuzz  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 7])
def test_mutated_recipes_are_refused_cleanly(seed: int) -> None:
    """Mutations of our own recipes (examples/, tests/recipes/), and of the public corpus when it
    is there."""
    report = fuzz(250, seed, hang=10.0)
    found = {f: report.counts[f] for f in FINDINGS if report.counts[f]}
    shown = "\n".join(e for f in found for e in report.examples.get(f, []))
    assert not found, f"{found}\n{shown}"
    # The mutations must reach both sides of the promise, or the test proves nothing.
    assert report.counts["refused"] > 120 and report.counts["loaded"] > 15, report.counts


def test_the_absurd_check_sees_each_bounded_field() -> None:
    """The check itself: each item-4 value, put into a recipe that otherwise loads, is a
    finding when it gets through (so the test above would see it)."""
    import msgspec
    import yaml
    from fuzz_recipes import absurd_field

    from srt_schema.recipe import Recipe

    base = yaml.safe_load((ROOT / "examples" / "quickstart.yaml").read_text())
    assert absurd_field(msgspec.convert(base, Recipe)) is None
    for path, value in (
        (("model", "path"), " " * 100_000),
        (("model", "container"), "x" * 100_000),
        (("model", "precision"), "🙂"),
        (("resources", "gpu_type"), "x" * 100_000),
        (("slurm", "time_limit"), "banana"),
        (("benchmark", "concurrencies"), [1] * 20_000),
    ):
        doc = yaml.safe_load((ROOT / "examples" / "quickstart.yaml").read_text())
        doc.setdefault(path[0], {})[path[1]] = value
        assert absurd_field(msgspec.convert(doc, Recipe)) is not None, path
