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
    # Before the slow imports (polars): a stop that arrives while the scraper starts still ends
    # with a published (possibly empty) final.parquet instead of a process killed mid-import.
    stop = _stop_on_signals()
    from srt_telemetry.config import ScrapeConfig, read_config
    from srt_telemetry.scraper import run_scraper

    config = read_config(Path(args.config), ScrapeConfig)
    stats = run_scraper(config, stop)
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


def _cmd_power_collect(args: argparse.Namespace) -> int:
    from srt_telemetry.config import PowerConfig, read_config
    from srt_telemetry.power_collect import run_power_collector

    config = read_config(Path(args.config), PowerConfig)
    state = run_power_collector(config, _stop_on_signals())
    print(
        json.dumps(
            {
                "ready": state.ready,
                "scrape_count": state.scrape_count,
                "sample_row_count": state.sample_row_count,
                "reason_codes": state.reason_codes,
            },
            sort_keys=True,
        )
    )
    return 0


def _cmd_power_wait_ready(args: argparse.Namespace) -> int:
    from srt_telemetry.config import PowerConfig, read_config
    from srt_telemetry.power_ready import wait_power_ready

    config = read_config(Path(args.config), PowerConfig)
    timeout = args.timeout if args.timeout is not None else config.startup_timeout_seconds + 5.0
    ready, detail = wait_power_ready(Path(config.power_dir), timeout)
    print(detail, file=sys.stdout if ready else sys.stderr)
    return 0 if ready else 1


def _cmd_power_finalize(args: argparse.Namespace) -> int:
    from srt_telemetry.config import PowerConfig, read_config
    from srt_telemetry.power_finalize import RuntimeFacts, finalize_power

    config = read_config(Path(args.config), PowerConfig)
    facts = RuntimeFacts(
        benchmark_reap=args.benchmark_reap,
        interrupted=args.interrupted,
        exporter_exited=args.exporter_exited,
        startup_failures=tuple(args.startup_failure),
    )
    result = finalize_power(config, facts)
    m = result.manifest
    print(
        json.dumps(
            {
                "status": m.status,
                "publication_valid": m.publication_valid,
                "reason_codes": m.reason_codes,
                "exit_nonzero": result.exit_nonzero,
            },
            sort_keys=True,
        )
    )
    return 1 if result.exit_nonzero else 0


def _cmd_cpu_collect(args: argparse.Namespace) -> int:
    import os

    from srt_telemetry.config import CpuPowerConfig, read_config
    from srt_telemetry.cpu_collect import node_hostname, run_cpu_collector

    config = read_config(Path(args.config), CpuPowerConfig)
    host = args.hostname or node_hostname(dict(os.environ))
    result = run_cpu_collector(config, host, _stop_on_signals())
    print(
        json.dumps({"hostname": host, "rows": result.rows, "read_failures": result.read_failures})
    )
    return result.exit_code


def _cmd_cpu_wait_ready(args: argparse.Namespace) -> int:
    from srt_telemetry.config import CpuPowerConfig, read_config
    from srt_telemetry.cpu_collect import wait_cpu_ready, write_initial_manifest

    config = read_config(Path(args.config), CpuPowerConfig)
    if args.init:
        write_initial_manifest(config)
        return 0
    ready, detail = wait_cpu_ready(config, args.timeout)
    print(detail, file=sys.stdout if ready else sys.stderr)
    return 0 if ready else 1


def _cmd_cpu_finalize(args: argparse.Namespace) -> int:
    from srt_telemetry.config import CpuPowerConfig, read_config
    from srt_telemetry.cpu_collect import finalize_cpu_power

    config = read_config(Path(args.config), CpuPowerConfig)
    manifest, nonzero = finalize_cpu_power(
        config, interrupted=args.interrupted, failed_processes=tuple(args.failed_process)
    )
    print(
        json.dumps(
            {
                "status": manifest.status,
                "publication_valid": manifest.publication_valid,
                "reason_codes": manifest.reason_codes,
                "sample_row_count": manifest.sample_row_count,
            },
            sort_keys=True,
        )
    )
    return 1 if nonzero else 0


def _cmd_cpu_exporter(args: argparse.Namespace) -> int:
    import msgspec

    from srt_telemetry.config import ExporterConfig, read_config
    from srt_telemetry.cpu_exporter import CpuPowerExporter

    config = read_config(Path(args.config), ExporterConfig) if args.config else ExporterConfig()
    overrides = {
        k: v
        for k, v in (
            ("port", args.port),
            ("bind", args.bind),
            ("source", args.source),
            ("hwmon_root", args.hwmon_root),
        )
        if v is not None
    }
    config = msgspec.structs.replace(config, **overrides)
    exporter = CpuPowerExporter(config)
    stop = _stop_on_signals()

    def stopper() -> None:
        stop.wait()
        exporter.shutdown()

    threading.Thread(target=stopper, daemon=True).start()
    print(f"listening on {config.bind}:{exporter.port}", flush=True)
    exporter.serve_forever()
    return 0


def _cmd_dashboard(args: argparse.Namespace) -> int:
    from srt_telemetry.config import DashboardConfig, read_config
    from srt_telemetry.dashboard import write_dashboard

    config = read_config(Path(args.config), DashboardConfig) if args.config else DashboardConfig()
    if args.out:
        import msgspec

        config = msgspec.structs.replace(config, output=args.out)
    print(write_dashboard(Path(args.run_dir), config))
    return 0


def _cmd_sweep_report(args: argparse.Namespace) -> int:
    from srt_telemetry.sweep_report import write_sweep_report

    print(write_sweep_report(Path(args.sweep_dir), Path(args.out) if args.out else None))
    return 0


def _cmd_power_validate(args: argparse.Namespace) -> int:
    from srt_telemetry.power_validate import validate_power

    roles: dict[str, int] = {}
    for item in args.expect_role:
        role, _, count = item.partition("=")
        if not role or not count.isdigit():
            print(
                f"srt-telemetry power validate: error: --expect-role {item!r}: "
                "expected ROLE=COUNT, e.g. prefill=4",
                file=sys.stderr,
            )
            return 2
        roles[role] = int(count)
    result = validate_power(Path(args.power_dir), Path(args.result_root), roles)
    for failure in result.failures:
        print(failure, file=sys.stderr)
    print("publishable and consistent" if result.ok else "NOT valid")
    return 0 if result.ok else 1


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

    power = sub.add_parser("power", help="DCGM GPU power over the benchmark windows")
    psub = power.add_subparsers(dest="power_command", required=True, metavar="STEP")
    p = psub.add_parser("collect", help="collect samples.csv until SIGTERM (then one last cycle)")
    p.add_argument("--config", required=True, help="PowerConfig JSON file")
    p.set_defaults(func=_cmd_power_collect)
    p = psub.add_parser(
        "wait-ready", help="block until one cycle saw every expected GPU (exit 0) or not (1)"
    )
    p.add_argument("--config", required=True, help="PowerConfig JSON file")
    p.add_argument("--timeout", type=float, help="seconds (default startup_timeout_seconds + 5)")
    p.set_defaults(func=_cmd_power_wait_ready)
    p = psub.add_parser(
        "finalize",
        help="validate windows, write the terminal manifest and energy.json; exit 1 when the "
        "capture failed operationally or `required` power is not publishable",
    )
    p.add_argument("--config", required=True, help="PowerConfig JSON file")
    p.add_argument(
        "--benchmark-reap",
        choices=("clean", "forced", "timeout"),
        default="clean",
        help="how the benchmark client ended: reaped cleanly, force-killed, or not proven reaped",
    )
    p.add_argument("--interrupted", action="store_true", help="the run was cancelled/aborted")
    p.add_argument("--exporter-exited", action="store_true", help="a DCGM exporter died")
    p.add_argument(
        "--startup-failure",
        action="append",
        default=[],
        choices=("exporter_launch_failed", "endpoint_resolution_failed"),
        help="a start-up failure the runtime saw (repeatable)",
    )
    p.set_defaults(func=_cmd_power_finalize)

    p = psub.add_parser(
        "validate",
        help="offline: recompute the verdict from disk; exit 0 only if publishable and consistent",
    )
    p.add_argument("--power-dir", required=True, help="<log_dir>/<telemetry.storage_subdir>")
    p.add_argument("--result-root", required=True, help="<log_dir> (window result_path base)")
    p.add_argument("--expect-role", action="append", default=[], help="ROLE=GPU_COUNT")
    p.set_defaults(func=_cmd_power_validate)

    cpu = sub.add_parser("cpu-power", help="CPU power: in-job collector (leg A) and exporter (B)")
    csub = cpu.add_subparsers(dest="cpu_command", required=True, metavar="STEP")
    p = csub.add_parser(
        "collect", help="sample this node's CPU power until SIGTERM (source auto = ACPI, DCGM)"
    )
    p.add_argument("--config", required=True, help="CpuPowerConfig JSON file")
    p.add_argument("--hostname", help="default: $SLURMD_NODENAME or the short hostname")
    p.set_defaults(func=_cmd_cpu_collect)
    p = csub.add_parser("wait-ready", help="head: wait for every node's ready marker")
    p.add_argument("--config", required=True, help="CpuPowerConfig JSON file")
    p.add_argument("--timeout", type=float, help="seconds (default startup_timeout_seconds)")
    p.add_argument("--init", action="store_true", help="only write the 'starting' manifest")
    p.set_defaults(func=_cmd_cpu_wait_ready)
    p = csub.add_parser("finalize", help="head: merge node CSVs into samples.csv + manifest")
    p.add_argument("--config", required=True, help="CpuPowerConfig JSON file")
    p.add_argument("--interrupted", action="store_true", help="the run was cancelled/aborted")
    p.add_argument(
        "--failed-process", action="append", default=[], help="a collector that exited nonzero"
    )
    p.set_defaults(func=_cmd_cpu_finalize)
    p = csub.add_parser(
        "exporter",
        help="serve /metrics and /health (default port 9405; source auto = DCGM, then ACPI)",
    )
    p.add_argument("--config", help="ExporterConfig JSON file (flags below override it)")
    p.add_argument("--port", type=int)
    p.add_argument("--bind")
    p.add_argument("--source", choices=("auto", "acpi", "dcgm"))
    p.add_argument("--hwmon-root")
    p.set_defaults(func=_cmd_cpu_exporter)

    p = sub.add_parser(
        "dashboard", help="write RUN_DIR/perf_dashboard.html (self-contained, inline SVG)"
    )
    p.add_argument("run_dir", metavar="RUN_DIR", help="the run's log directory")
    p.add_argument("--config", help="DashboardConfig JSON file")
    p.add_argument("--out", help="output file name/path (default perf_dashboard.html)")
    p.set_defaults(func=_cmd_dashboard)

    p = sub.add_parser(
        "sweep-report",
        help="write SWEEP_DIR/sweep-report.html: Pareto frontier, curves, validity, run links",
    )
    p.add_argument(
        "sweep_dir", metavar="SWEEP_DIR", help="<output>/sweeps/<sweep>, or a folder of job folders"
    )
    p.add_argument("--out", help="output file (default SWEEP_DIR/sweep-report.html)")
    p.set_defaults(func=_cmd_sweep_report)

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
