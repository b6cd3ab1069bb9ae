"""srtctl start-up: the median wall times of ``srtctl validate -f <recipe>`` and ``srtctl dry-run
-f <recipe>`` (output to /dev/null) next to ``python -c pass`` with the same interpreter.

Run from the repository root:

    uv run --frozen python benchmarks/cli_startup.py
    uv run --frozen python benchmarks/cli_startup.py -f examples/quickstart.yaml --runs 20

Each command is run ``--warmup`` times first (not measured), then ``--runs`` times, interleaved so
machine noise hits all alike. Two floors are timed alone: ``import click, msgspec, yaml`` (the
third-party libraries every dry-run needs: what no change to srt can remove) and ``import click,
srt_schema, srt_planner`` (what srt-cli cannot go below). Target: dry-run within 6x of bare
interpreter start-up; the ratio of the library floor is printed before it (on a machine where the
floor alone is near the target, the target is out of reach without other libraries). The last
lines are ``ratio validate/python: <x.x>`` and ``ratio dry-run/python: <x.x>``.

The commands run with this environment as it is, ``PYTHONDONTWRITEBYTECODE`` included (some CI
images and sandboxes set it, and uv installs without bytecode): the bytecode is what ``make sync``
compiled at install (``uv sync --compile-bytecode`` for the dependencies, ``compileall`` for the
workspace's editable sources). Without it every start compiles every module from source, which
measures the compiler, not the start-up; the script says so when srt's own bytecode is missing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_RECIPE = REPO / "packages" / "srt-cli" / "tests" / "data" / "mocker-agg.yaml"
TARGET_RATIO = 6.0


#: The children's environment: this one, as it is (see the docstring).
ENV = dict(os.environ)


def _time(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        command, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
    )
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-f", "--file", type=Path, default=DEFAULT_RECIPE, help="recipe to dry-run")
    parser.add_argument("--runs", type=int, default=15, help="measured runs of each (>= 10)")
    parser.add_argument("--warmup", type=int, default=3, help="unmeasured runs of each first")
    args = parser.parse_args()
    if args.runs < 10:
        parser.error("--runs must be at least 10")
    srtctl = shutil.which("srtctl", path=str(Path(sys.executable).parent))
    if srtctl is None:
        parser.error(
            f"srtctl is not installed next to {sys.executable}; run `uv sync --all-packages`"
        )
    recipe = args.file.resolve()
    compiled = list(
        (REPO / "packages" / "srt-cli" / "src" / "srt_cli" / "__pycache__").glob("*.pyc")
    )
    if not compiled:
        print("warning: srt_cli has no compiled bytecode; run `make sync` first", file=sys.stderr)
    dry_run = [srtctl, "dry-run", "-f", str(recipe)]
    validate = [srtctl, "validate", "-f", str(recipe)]
    bare = [sys.executable, "-c", "pass"]
    # The floors: the third-party libraries every dry-run needs, then those and srt's own
    # packages, imported and unused.
    libraries = [sys.executable, "-c", "import click, msgspec, yaml"]
    floor = [sys.executable, "-c", "import click, srt_schema, srt_planner"]
    for command in (dry_run, validate):
        check = subprocess.run(
            command, cwd=REPO, env=ENV, capture_output=True, text=True, check=False
        )
        if check.returncode != 0:
            print(f"{' '.join(command)} failed ({check.returncode}):\n{check.stderr}")
            return 1
    for _ in range(args.warmup):
        _time(bare, REPO)
        _time(libraries, REPO)
        _time(floor, REPO)
        _time(validate, REPO)
        _time(dry_run, REPO)
    bare_times: list[float] = []
    library_times: list[float] = []
    floor_times: list[float] = []
    validate_times: list[float] = []
    cli_times: list[float] = []
    for _ in range(args.runs):
        bare_times.append(_time(bare, REPO))
        library_times.append(_time(libraries, REPO))
        floor_times.append(_time(floor, REPO))
        validate_times.append(_time(validate, REPO))
        cli_times.append(_time(dry_run, REPO))
    bare_median = statistics.median(bare_times)
    cli_median = statistics.median(cli_times)
    ratio = cli_median / bare_median
    validate_ratio = statistics.median(validate_times) / bare_median
    print(f"recipe: {recipe}")
    print(f"PYTHONDONTWRITEBYTECODE: {'set' if ENV.get('PYTHONDONTWRITEBYTECODE') else 'unset'}")
    print(f"runs: {args.runs} each after {args.warmup} warm-up")
    rows = (
        ("python -c pass", bare_times),
        ("import click+msgspec+yaml", library_times),
        ("import click+schema+planner", floor_times),
        ("srtctl validate -f ...", validate_times),
        ("srtctl dry-run -f ...", cli_times),
    )
    for label, times in rows:
        median = statistics.median(times) * 1000
        print(f"{label:28s} median {median:8.1f} ms  (min {min(times) * 1000:.1f})")
    library_ratio = statistics.median(library_times) / bare_median
    # what the three libraries alone cost: a target at or below it cannot be met by srt's code
    print(f"ratio click+msgspec+yaml/python: {library_ratio:.1f} (the floor)")
    verdict = "met" if ratio <= TARGET_RATIO else "not met"
    print(f"target: dry-run within {TARGET_RATIO:g}x ({verdict})")
    print(f"ratio validate/python: {validate_ratio:.1f}")
    print(f"ratio dry-run/python: {ratio:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
