"""srtctl start-up: the median wall time of ``srtctl dry-run -f <recipe>`` (output to /dev/null)
next to ``python -c pass`` with the same interpreter.

Run from the repository root:

    uv run --frozen python benchmarks/cli_startup.py
    uv run --frozen python benchmarks/cli_startup.py -f examples/quickstart.yaml --runs 20

Each command is run ``--warmup`` times first (not measured), then ``--runs`` times, interleaved so
machine noise hits all alike. A third line times ``import click, srt_schema, srt_planner`` alone:
the floor a dry-run cannot go below whatever srt-cli does. Target: dry-run within 6x of bare
interpreter start-up. The last line is ``ratio dry-run/python: <x.x>``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_RECIPE = REPO / "packages" / "srt-cli" / "tests" / "data" / "mocker-agg.yaml"
TARGET_RATIO = 6.0


def _time(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
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
    # The floor srt-cli cannot go below: the libraries every dry-run needs, imported and unused.
    floor = [sys.executable, "-c", "import click, srt_schema, srt_planner"]
    check = subprocess.run(dry_run, cwd=REPO, capture_output=True, text=True, check=False)
    if check.returncode != 0:
        print(
            f"srtctl dry-run -f {recipe} failed ({check.returncode}):\n{check.stderr}",
            file=sys.stderr,
        )
        return 1
    for _ in range(args.warmup):
        _time(bare, REPO)
        _time(floor, REPO)
        _time(dry_run, REPO)
    bare_times: list[float] = []
    floor_times: list[float] = []
    cli_times: list[float] = []
    for _ in range(args.runs):
        bare_times.append(_time(bare, REPO))
        floor_times.append(_time(floor, REPO))
        cli_times.append(_time(dry_run, REPO))
    bare_median = statistics.median(bare_times)
    cli_median = statistics.median(cli_times)
    ratio = cli_median / bare_median
    print(f"recipe: {recipe}")
    print(f"runs: {args.runs} each after {args.warmup} warm-up")
    rows = (
        ("python -c pass", bare_times),
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
