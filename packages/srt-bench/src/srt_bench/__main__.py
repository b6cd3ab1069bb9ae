"""`srt-bench`: the benchmark client process the runtime starts.

srt-bench run --config bench.json [--endpoint URL] [--out DIR]
srt-bench rollup --config bench.json [--out DIR]
srt-bench energy --log-dir LOG [--power-dir DIR] [--cpu-power-dir DIR]
srt-bench profiles --log-dir LOG [--expect-nsys OUTPUT]... [--expect-dir PHASE]...
srt-bench validity --log-dir LOG [--power-dir DIR] [--expect-concurrency N]... [--single-host]
srt-bench tokenizer --config bench.json [--record FILE]
srt-bench types
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

import msgspec

from srt_bench.config import BenchRunConfig, read_run_config
from srt_bench.energy import apply_energy
from srt_bench.errors import BenchError
from srt_bench.execute import run_plan, write_sa_bench_rollup
from srt_bench.fetch import fetch_datasets
from srt_bench.profiles import apply_profiles, collect_profiles
from srt_bench.runners import BuildContext, build_plan, registered_types
from srt_bench.validity import apply_validity
from srt_bench.windows import ensure_window_dir

EXIT_SIGNAL = 1


def _log(line: str) -> None:
    print(f"[srt-bench] {line}", flush=True)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="srt-bench", description=__doc__.split("\n")[1])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the benchmark described by a run config")
    run.add_argument("--config", required=True, type=Path, help="bench.json written by the planner")
    run.add_argument("--endpoint", help="frontend base URL (overrides the config's endpoint)")
    run.add_argument("--out", type=Path, help="result folder (overrides the config's output_dir)")
    run.add_argument(
        "--window-dir",
        type=Path,
        help="measurement-window folder, created if missing (default: $SRT_MEASUREMENT_WINDOW_DIR)",
    )
    roll = sub.add_parser(
        "rollup", help="(re)write benchmark-rollup.{json,csv} from sa-bench results"
    )
    roll.add_argument("--config", required=True, type=Path)
    roll.add_argument("--out", type=Path)
    energy = sub.add_parser(
        "energy", help="add GPU/CPU energy per concurrency to benchmark-rollup.json"
    )
    energy.add_argument("--log-dir", required=True, type=Path, help="holds benchmark-rollup.json")
    energy.add_argument("--power-dir", type=Path, help="GPU power folder (default LOG/power)")
    energy.add_argument(
        "--cpu-power-dir", type=Path, help="CPU power folder, leg A (default LOG/cpu_power)"
    )
    prof = sub.add_parser(
        "profiles",
        help="list the profiles under LOG/profiles/, check the expected ones, add them to the "
        "rollup",
    )
    prof.add_argument("--log-dir", required=True, type=Path, help="the job's log folder")
    prof.add_argument(
        "--expect-nsys",
        action="append",
        default=[],
        metavar="OUTPUT",
        help="an nsys -o path relative to LOG whose report must exist (repeatable)",
    )
    prof.add_argument(
        "--expect-dir",
        action="append",
        default=[],
        metavar="PHASE",
        help="a phase folder under LOG/profiles/ that must hold a trace (repeatable)",
    )
    valid = sub.add_parser(
        "validity", help="a valid/invalid verdict per window and for the run, into the rollup"
    )
    valid.add_argument("--log-dir", required=True, type=Path, help="holds benchmark-rollup.json")
    valid.add_argument(
        "--power-dir", type=Path, help="GPU power folder: power telemetry was asked for"
    )
    valid.add_argument(
        "--expect-concurrency",
        action="append",
        type=int,
        default=[],
        metavar="N",
        help="a planned concurrency that must have a run (repeatable)",
    )
    valid.add_argument(
        "--single-host",
        action="store_true",
        help="every node is this host (local launcher): the clocks agree by construction",
    )
    valid.add_argument(
        "--events",
        type=Path,
        help="the job's status_events.jsonl (default: as logs/health_gate.json names it)",
    )
    tok = sub.add_parser(
        "tokenizer",
        help="load the tokenizer the run will use (fetch an hf: model's files into the HF cache, "
        "import a custom_tokenizer class) and record the hub commit",
    )
    tok.add_argument("--config", required=True, type=Path, help="bench.json written by the planner")
    tok.add_argument("--record", type=Path, help="write the fetched hub snapshot here (JSON)")
    sub.add_parser("types", help="list the registered benchmark types")
    return parser


def _with_overrides(
    config: BenchRunConfig, endpoint: str | None, out: Path | None
) -> BenchRunConfig:
    changes: dict[str, str] = {}
    if endpoint:
        changes["endpoint"] = endpoint
    if out is not None:
        changes["output_dir"] = str(out)
    return msgspec.structs.replace(config, **changes) if changes else config


def _window_dir(arg: Path | None) -> Path | None:
    """`--window-dir`, else `$SRT_MEASUREMENT_WINDOW_DIR`, created (parents included)."""
    env = os.environ.get("SRT_MEASUREMENT_WINDOW_DIR")
    path = arg if arg is not None else (Path(env) if env else None)
    return ensure_window_dir(path) if path is not None else None


def _energy(args: argparse.Namespace) -> int:
    log_dir: Path = args.log_dir
    outcome = apply_energy(
        log_dir, args.power_dir or log_dir / "power", args.cpu_power_dir or log_dir / "cpu_power"
    )
    if outcome is None:
        _log(f"energy: no {log_dir / 'benchmark-rollup.json'}: nothing to add energy to")
        return 0
    summary = {
        "runs_with_energy": outcome.runs_with_energy,
        "publication_valid": outcome.publication_valid,
        "missing": outcome.missing,
    }
    print(json.dumps(summary), flush=True)
    return 0


def _profiles(args: argparse.Namespace) -> int:
    log_dir: Path = args.log_dir
    summary = collect_profiles(log_dir, expect_nsys=args.expect_nsys, expect_dirs=args.expect_dir)
    in_rollup = apply_profiles(log_dir, summary)
    for f in summary.files:
        _log(f"profile: {f.path} ({f.bytes} bytes)")
    for line in summary.missing:
        _log(f"profile missing: {line}")
    where = "benchmark-rollup.json and profiles/index.json" if in_rollup else "profiles/index.json"
    _log(f"profiles: {len(summary.files)} file(s), {len(summary.missing)} missing; in {where}")
    return 0


def _validity(args: argparse.Namespace) -> int:
    log_dir: Path = args.log_dir
    outcome = apply_validity(
        log_dir,
        power_dir=args.power_dir,
        expected=tuple(args.expect_concurrency),
        single_host=args.single_host,
        events_file=args.events,
    )
    if outcome is None:
        _log(f"validity: no {log_dir / 'benchmark-rollup.json'}: nothing to judge")
        return 0
    for c, window in outcome.windows.items():
        codes = ", ".join(r.code for r in window.reasons)
        _log(f"validity: concurrency {c}: {window.verdict}" + (f" ({codes})" if codes else ""))
    for r in outcome.run.reasons:
        _log(f"validity: invalid: {r.code}: {r.detail}")
    for r in outcome.run.not_checked:
        _log(f"validity: not checked: {r.code}: {r.detail}")
    summary = {
        "verdict": outcome.run.verdict,
        "reasons": sorted({r.code for r in outcome.run.reasons}),
        "windows": {str(c): w.verdict for c, w in outcome.windows.items()},
    }
    print(json.dumps(summary), flush=True)
    return 0


def _tokenizer(args: argparse.Namespace) -> int:
    """The job's first step that needs the tokenizer: fail here, before the workers load."""
    from srt_bench.sa_bench_settings import build_sa_bench_settings
    from srt_bench.tokenizer import load_bench_tokenizer

    settings = build_sa_bench_settings(read_run_config(args.config))
    loaded = load_bench_tokenizer(settings.tokenizer_path, settings.tokenizer_class)
    if loaded is None:
        _log("tokenizer: the run config names none")
        return 0
    how = f" built by {settings.tokenizer_class}" if settings.tokenizer_class else ""
    _log(f"tokenizer: {loaded.source}{how}: loaded")
    if loaded.hub is not None:
        hub = loaded.hub
        where = "from the cache (offline)" if hub.offline else f"from {hub.endpoint}"
        _log(
            f"tokenizer: {hub.repo}@{hub.revision} is commit {hub.commit}, "
            f"{len(hub.files)} file(s) {where} in {hub.folder}"
        )
        if args.record is not None:
            args.record.parent.mkdir(parents=True, exist_ok=True)
            args.record.write_bytes(msgspec.json.format(msgspec.json.encode(hub)) + b"\n")
    return 0


def _run(args: argparse.Namespace) -> int:
    config = _with_overrides(read_run_config(args.config), args.endpoint, args.out)
    window_dir = _window_dir(args.window_dir)  # before any request: exit 2 if it cannot be made
    out_dir = Path(config.output_dir)
    # the trace (or other file) the plan downloads, before anything else runs
    config = fetch_datasets(config, out_dir, _log)
    now = dt.datetime.now(dt.UTC)
    context = BuildContext(
        out_dir=out_dir, environ=dict(os.environ), stamp=now.strftime("%Y%m%d_%H%M%S")
    )
    plan = build_plan(config, context)
    stop = threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        stop.set()
        if config.benchmark.type != "manual":
            raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    _log(
        f"benchmark type {config.benchmark.type!r} against {config.endpoint}, results in {out_dir}"
    )
    return run_plan(plan, config, out_dir, log=_log, stop=stop, window_dir=window_dir)


def main(argv: Sequence[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    try:
        match args.command:
            case "run":
                code = _run(args)
            case "rollup":
                config = _with_overrides(read_run_config(args.config), None, args.out)
                path = write_sa_bench_rollup(
                    config, Path(config.output_dir), dt.datetime.now(dt.UTC)
                )
                _log(f"rollup: {path}" if path else "rollup: no sa-bench results found")
                code = 0
            case "energy":
                code = _energy(args)
            case "profiles":
                code = _profiles(args)
            case "validity":
                code = _validity(args)
            case "tokenizer":
                code = _tokenizer(args)
            case "types":
                print("\n".join(registered_types()))
                code = 0
            case _:
                raise AssertionError(args.command)
    except BenchError as exc:
        print(f"srt-bench: error: {exc}", file=sys.stderr, flush=True)
        code = exc.exit_code
    except KeyboardInterrupt:
        print("srt-bench: stopped by signal", file=sys.stderr, flush=True)
        code = EXIT_SIGNAL
    sys.exit(code)


if __name__ == "__main__":
    main()
