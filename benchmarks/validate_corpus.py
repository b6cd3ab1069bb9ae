"""How fast srt-schema validates recipes.

Prints (1) files per second for loading every corpus recipe (v2 and v1, override variants and
sweep jobs expanded) in one process, and (2) the median wall time of
``python -m srt_schema validate <one recipe>`` as a whole process next to ``python -c pass``
(target: within 4x of bare interpreter start-up).

    uv run python benchmarks/validate_corpus.py [--runs 15] [--corpus DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from srt_schema import RecipeError, load_recipe_text

REPO = Path(__file__).resolve().parents[1]


def _corpus(arg: str | None) -> Path:
    return Path(arg or os.environ.get("SRT_CORPUS", REPO.parent / "shared" / "corpus"))


def in_process(root: Path, rounds: int) -> None:
    files = sorted(root.rglob("*.yaml"))
    texts = [(str(f), f.read_text()) for f in files]
    loaded = refused = jobs = 0
    start = time.perf_counter()
    for _ in range(rounds):
        for name, text in texts:
            try:
                jobs += len(load_recipe_text(text, file=name))
                loaded += 1
            except RecipeError:
                refused += 1
    elapsed = time.perf_counter() - start
    total = len(texts) * rounds
    print(
        f"in-process: {total} files ({loaded} loaded, {refused} refused, {jobs} jobs) in "
        f"{elapsed:.3f} s = {total / elapsed:,.0f} files/s"
    )


def _median_wall(argv: list[str], runs: int) -> float:
    # As a user runs it: bytecode caches are written by the warm-up and used afterwards (this
    # sandbox sets PYTHONDONTWRITEBYTECODE, which would recompile every module on every run).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(argv, check=False, capture_output=True, env=env)  # warm-up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=False, capture_output=True, env=env)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def whole_process(recipe: Path, runs: int) -> None:
    bare = _median_wall([sys.executable, "-c", "pass"], runs)
    cmd = [sys.executable, "-m", "srt_schema", "validate", "--no-cluster", str(recipe)]
    validate = _median_wall(cmd, runs)
    print(f"python -c pass:            median {bare * 1000:7.1f} ms over {runs} runs")
    print(f"srt_schema validate <one>: median {validate * 1000:7.1f} ms over {runs} runs")
    print(f"ratio validate/pass: {validate / bare:.2f} (target <= 4)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", help="corpus folder (default $SRT_CORPUS or ../shared/corpus)")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--rounds", type=int, default=5, help="passes over the corpus")
    args = parser.parse_args()
    root = _corpus(args.corpus)
    in_process(root, args.rounds)
    recipe = (
        root / "v2" / "SemiAnalysisAI" / "srt-slurm" / "examples" / "mocker" / "dynamo-agg.yaml"
    )
    whole_process(recipe, args.runs)


if __name__ == "__main__":
    main()
