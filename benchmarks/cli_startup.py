"""srtctl start-up: the median wall time of ``srtctl dry-run -f <recipe>`` (output to /dev/null)
next to ``python -c pass`` with the same interpreter.

Run from the repository root:

    uv run --frozen python benchmarks/cli_startup.py
    uv run --frozen python benchmarks/cli_startup.py -f examples/quickstart.yaml --runs 20

Each command is run ``--warmup`` times first (not measured), then ``--runs`` times, interleaved so
machine noise hits all alike. Two floors are timed alone: ``import click, msgspec, yaml`` (the
third-party libraries every dry-run needs: what no change to srt can remove) and ``import click,
srt_schema, srt_planner`` (what srt-cli cannot go below). Target: dry-run within 6x of bare
interpreter start-up. The last line is ``ratio dry-run/python: <x.x>``.

The commands run without ``PYTHONDONTWRITEBYTECODE``: the warm-up writes the bytecode cache as a
user's first run of an installed ``srtctl`` does, so the measured runs are the steady state. With
it set (some CI images and sandboxes do), every module edited since its ``.pyc`` was written is
compiled from source on every run, which measures the compiler, not the start-up.
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


#: The children's environment: this one, with the bytecode cache allowed (see the docstring).
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


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
    dry_run = [srtctl, "dry-run", "-f", str(recipe)]
    bare = [sys.executable, "-c", "pass"]
    # The floors: the third-party libraries every dry-run needs, then those and srt's own
    # packages, imported and unused.
    libraries = [sys.executable, "-c", "import click, msgspec, yaml"]
    floor = [sys.executable, "-c", "import click, srt_schema, srt_planner"]
    check = subprocess.run(dry_run, cwd=REPO, env=ENV, capture_output=True, text=True, check=False)
    if check.returncode != 0:
        print(
            f"srtctl dry-run -f {recipe} failed ({check.returncode}):\n{check.stderr}",
            file=sys.stderr,
        )
        return 1
    for _ in range(args.warmup):
        _time(bare, REPO)
        _time(libraries, REPO)
        _time(floor, REPO)
        _time(dry_run, REPO)
    bare_times: list[float] = []
    library_times: list[float] = []
    floor_times: list[float] = []
    cli_times: list[float] = []
    for _ in range(args.runs):
        bare_times.append(_time(bare, REPO))
        library_times.append(_time(libraries, REPO))
        floor_times.append(_time(floor, REPO))
        cli_times.append(_time(dry_run, REPO))
    bare_median = statistics.median(bare_times)
    cli_median = statistics.median(cli_times)
    ratio = cli_median / bare_median
    print(f"recipe: {recipe}")
    print(f"runs: {args.runs} each after {args.warmup} warm-up")
    rows = (
        ("python -c pass", bare_times),
        ("import click+msgspec+yaml", library_times),
        ("import click+schema+planner", floor_times),
        ("srtctl dry-run -f ...", cli_times),
    )
    for label, times in rows:
        median = statistics.median(times) * 1000
        print(f"{label:28s} median {median:8.1f} ms  (min {min(times) * 1000:.1f})")
    print(f"target: within {TARGET_RATIO:g}x ({'met' if ratio <= TARGET_RATIO else 'not met'})")
    print(f"ratio dry-run/python: {ratio:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
