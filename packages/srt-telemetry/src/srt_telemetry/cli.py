"""The `srt-telemetry` command line: the only place that prints, handles signals and exits."""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from srt_telemetry import __version__
from srt_telemetry.errors import TelemetryError

__all__ = ["build_parser", "main"]

EPILOG = """\
Every subcommand reads the JSON config file the planner wrote (see the package README for each
shape). Exit codes: 0 ok, 1 failure (or required power not publishable), 2 bad config/usage.
"""


def _stop_on_signals() -> threading.Event:
    stop = threading.Event()

    def handler(signum: int, frame: FrameType | None) -> None:
        logging.getLogger("srt_telemetry").info("signal %d: stopping", signum)
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    return stop


def _cmd_scrape(args: argparse.Namespace) -> int:
    from srt_telemetry.config import ScrapeConfig, read_config
    from srt_telemetry.scraper import run_scraper

    config = read_config(Path(args.config), ScrapeConfig)
    stats = run_scraper(config, _stop_on_signals())
    print(
        json.dumps(
            {
                "final": stats.final_path,
                "final_rows": stats.final_rows,
                "rows_written": stats.rows_written,
                "segments_sealed": stats.segments_sealed,
                "scrapes": stats.scrapes,
                "errors": stats.errors,
                "shutdown_seconds": round(stats.shutdown_seconds, 3),
            },
            sort_keys=True,
        )
    )
    return 0


def _cmd_compact(args: argparse.Namespace) -> int:
    from srt_telemetry.segments import compact_segments, list_segments

    local = Path(args.input_dir)
    if not local.is_dir():
        print(f"srt-telemetry compact: error: {local} is not a directory", file=sys.stderr)
        return 2
    out = Path(args.output) if args.output else local / "final.parquet"
    rows = compact_segments(list_segments(local), out)
    print(json.dumps({"output": str(out), "rows": rows}, sort_keys=True))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="srt-telemetry",
        description="Metrics capture to Parquet, GPU/CPU power collection, and the run dashboard.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"srt-telemetry {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("scrape", help="scrape Prometheus endpoints into Parquet until SIGTERM")
    p.add_argument("--config", required=True, help="ScrapeConfig JSON file")
    p.set_defaults(func=_cmd_scrape)

    p = sub.add_parser("compact", help="merge a scraper local dir's sealed segments into one file")
    p.add_argument("input_dir", help="the scraper's local dir (out-N / incomplete-N segments)")
    p.add_argument("-o", "--output", help="output file (default INPUT_DIR/final.parquet)")
    p.set_defaults(func=_cmd_compact)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        code: int = args.func(args)
    except TelemetryError as exc:
        print(f"srt-telemetry {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    return code
