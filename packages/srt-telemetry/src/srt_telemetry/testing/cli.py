"""`python -m srt_telemetry.testing`: the replaying DCGM exporter and the fake hwmon tree.

    replay-dcgm --capture FILE [--curve const:W|linear:BASE:SLOPE] [--gpu-offset-w W]
                [--gpus N] [--hostname H] [--start-unix T] [--clock-offset-s S]
                [--die-after-s S] [--die-on-sigusr1] [--host H] [--port P | --address [HOST]:P]
                [--collect-interval MS]
        --port takes the port the planner substitutes for `{port}` (`9401`, also `:9401` or
        `HOST:9401`); `--address` and `--collect-interval` are dcgm-exporter's spellings, so a
        recipe can swap the binary and keep the arguments (`--collect-interval` changes nothing:
        power is computed when a request arrives). `--hostname` defaults to $SLURMD_NODENAME,
        else this machine's short hostname, so the nodes of a cluster get distinct UUIDs.
        prints one JSON line (`ReplayInfo`: url, port, start_unix, uuids, ...) once it listens,
        serves until SIGTERM/SIGINT (exit 0), or until --die-after-s or, with
        --die-on-sigusr1, a SIGUSR1 (exit 1, like a crash).
    fake-hwmon --root DIR [--sockets N] [--watts W] [--socket-offset-w W] [--layout acpi|flat]
        writes (or rewrites the values of) the tree, prints one JSON line, exits 0.

Bad input exits 2 with `srt-telemetry testing <command>: error: ...` on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

import msgspec

from srt_telemetry.errors import ConfigError, TelemetryError

__all__ = ["build_parser", "default_hostname", "main", "parse_listen"]


def _cmd_replay(args: argparse.Namespace) -> int:
    from srt_telemetry.testing.capture import build_template
    from srt_telemetry.testing.curve import parse_curve
    from srt_telemetry.testing.dcgm_replay import DcgmReplayServer

    try:
        text = Path(args.capture).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"--capture {args.capture}: cannot read the capture: {exc}") from exc
    if args.die_after_s is not None and args.die_after_s <= 0:
        raise ConfigError(f"--die-after-s {args.die_after_s}: must be > 0")
    host, port = args.host, 0
    if args.port is not None:
        bind, port = parse_listen(args.port, "--port")
        host = bind if bind is not None else host
    if args.address is not None:
        bind, port = parse_listen(args.address, "--address")
        host = bind or "0.0.0.0"  # dcgm-exporter's `:PORT` = every interface
    server = DcgmReplayServer(
        build_template(text, gpus=args.gpus, hostname=args.hostname or default_hostname()),
        parse_curve(args.curve),
        host=host,
        port=port,
        gpu_offset_w=args.gpu_offset_w,
        start_unix=args.start_unix,
        clock_offset_s=args.clock_offset_s,
        die_after_s=args.die_after_s,
    )
    stop, killed = threading.Event(), threading.Event()

    def handler(signum: int, frame: FrameType | None) -> None:
        if signum == signal.SIGUSR1:
            killed.set()
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    if args.die_on_sigusr1:
        signal.signal(signal.SIGUSR1, handler)

    def stopper() -> None:  # serve_forever runs in this (main) thread: stop it from another
        stop.wait()
        if killed.is_set():
            server.die()
        else:
            server.shutdown()

    threading.Thread(target=stopper, name="replay-stop", daemon=True).start()
    print(msgspec.json.encode(server.info()).decode(), flush=True)
    outcome = server.serve()
    if outcome == "died":
        how = (
            "on SIGUSR1 as asked (--die-on-sigusr1)"
            if killed.is_set()
            else f"after {args.die_after_s} s as asked (--die-after-s)"
        )
        print(f"replay-dcgm: died {how}", file=sys.stderr, flush=True)
        return 1
    return 0


def _cmd_fake_hwmon(args: argparse.Namespace) -> int:
    from srt_telemetry.testing.hwmon import write_fake_hwmon

    try:
        tree = write_fake_hwmon(
            Path(args.root),
            sockets=args.sockets,
            watts=args.watts,
            socket_offset_w=args.socket_offset_w,
            layout=args.layout,
        )
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    except OSError as exc:
        raise ConfigError(f"--root {args.root}: cannot write the tree: {exc}") from exc
    print(
        json.dumps(
            {
                "root": str(tree.root),
                "sockets": tree.sockets,
                "node_total_w": tree.node_total_w,
                "value_files": tree.value_files,
            },
            sort_keys=True,
        )
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m srt_telemetry.testing",
        description="Test tools: a replaying DCGM exporter and a fake ACPI hwmon tree.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("replay-dcgm", help="serve a DCGM capture with power on a known curve")
    p.add_argument("--capture", required=True, help="a dcgm-exporter /metrics capture file")
    p.add_argument(
        "--curve",
        default="const:200",
        help="const:W or linear:BASE:SLOPE (W = BASE + SLOPE * seconds since start)",
    )
    p.add_argument("--gpu-offset-w", type=float, default=0.0, help="GPU k draws k * this more")
    p.add_argument("--gpus", type=int, help="GPUs to serve (default: the capture's)")
    p.add_argument(
        "--hostname",
        help="Hostname label; also derives per-node UUIDs "
        "(default: $SLURMD_NODENAME, else this machine's short name)",
    )
    p.add_argument("--start-unix", type=float, help="the curve's t = 0 (default: now)")
    p.add_argument(
        "--clock-offset-s",
        type=float,
        help="stamp every sample with now + S (ms); without it no timestamps, as dcgm-exporter",
    )
    p.add_argument("--die-after-s", type=float, help="close the port and exit 1 after S s")
    p.add_argument(
        "--die-on-sigusr1",
        action="store_true",
        help="close the port and exit 1 on SIGUSR1 (a test's exporter crash at a chosen moment)",
    )
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    p.add_argument("--port", help="PORT, :PORT or HOST:PORT (default 0 = any free port on --host)")
    p.add_argument(
        "--address", help="[HOST]:PORT as dcgm-exporter takes it (no HOST: every interface)"
    )
    p.add_argument(
        "--collect-interval",
        type=int,
        metavar="MS",
        help="accepted for dcgm-exporter's command line; no effect",
    )
    p.set_defaults(func=_cmd_replay)

    p = sub.add_parser("fake-hwmon", help="write a fake hwmon tree with ACPI power_meter channels")
    p.add_argument("--root", required=True, help="directory to use as /sys/class/hwmon")
    p.add_argument("--sockets", type=int, default=2)
    p.add_argument("--watts", type=float, default=100.0, help="socket 0 total power (W)")
    p.add_argument(
        "--socket-offset-w", type=float, default=0.0, help="socket s draws s * this more"
    )
    p.add_argument("--layout", choices=("acpi", "flat"), default="acpi")
    p.set_defaults(func=_cmd_fake_hwmon)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.func(args)
    except TelemetryError as exc:
        print(f"srt-telemetry testing {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    return code


def default_hostname() -> str:
    """The node's name, as the CPU collector takes it: `$SLURMD_NODENAME` (set by Slurm on every
    node, distinct even for several nodes on one machine), else this machine's name up to the
    first dot. Two nodes running one command get distinct names, hence distinct UUIDs."""
    return os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".", 1)[0]


def parse_listen(text: str, flag: str) -> tuple[str | None, int]:
    """`PORT`, `:PORT` or `HOST:PORT` -> (HOST or None, PORT); `ConfigError` names the flag."""
    host, sep, port_text = text.rpartition(":")
    try:
        port = int(port_text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise ConfigError(
            f"{flag} {text!r}: not a port; give PORT, :PORT or HOST:PORT with PORT in 0..65535"
        )
    return (host.strip("[]") or None) if sep else None, port
