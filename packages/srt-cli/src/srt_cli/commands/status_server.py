"""``srtctl status-server``: run a status collector (SQLite) in the foreground.

The collector itself is :mod:`srt_cli.collector`; this module reads the tokens from the
environment, prints the one start-up line and the request log (stderr), and stops on Ctrl-C or
SIGTERM with exit 0.
"""

from __future__ import annotations

import datetime as dt
import signal
from pathlib import Path
from types import FrameType

import click

from srt_cli.environment import Edge
from srt_cli.errors import EXIT_SLURM, CliError
from srt_schema.timestamps import iso_seconds_z

DEFAULT_DB = "~/.local/state/srtctl/status.db"

EPILOG = """\b
Examples:
  srtctl status-server                               # http://127.0.0.1:8080, no token
  SRTCTL_STATUS_TOKEN=s3cret srtctl status-server --host 0.0.0.0 --port 9090
  srtctl status-server --db ./status.db --cors-origin http://localhost:3000
  # then, in the recipe or srtslurm.yaml:
  #   reporting: {status: {endpoint: "http://127.0.0.1:8080"}}

\b
Exit codes: 0 stopped by Ctrl-C or SIGTERM, 2 bad flags or token variables,
            4 the port or the database cannot be used.
"""


class StatusServerStartError(CliError):
    """The port or the database cannot be used (exit 4)."""

    exit_code = EXIT_SLURM


class _TerminatedError(Exception):
    """Raised in the main thread by the SIGTERM handler to leave the serve loop."""


def _stop(signum: int, frame: FrameType | None) -> None:
    raise _TerminatedError


def _log_line(line: str) -> None:
    now = iso_seconds_z(dt.datetime.now(dt.UTC))
    click.echo(f"{now} {line}", err=True)


@click.command("status-server", epilog=EPILOG)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    default=8080,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="TCP port (0 picks a free one; the start-up line shows it).",
)
@click.option(
    "--db",
    "db",
    default=DEFAULT_DB,
    show_default=True,
    metavar="PATH",
    help="SQLite database (created with its folder); uploaded logs go to PATH-uploads/.",
)
@click.option(
    "--token-env",
    default="SRTCTL_STATUS_TOKEN",
    show_default=True,
    metavar="VAR",
    help="Variable holding the write token (every route but / and /api/health needs it).",
)
@click.option(
    "--read-token-env",
    default="SRTCTL_STATUS_READ_TOKEN",
    show_default=True,
    metavar="VAR",
    help="Variable holding an optional read token (GET and HEAD only).",
)
@click.option(
    "--allow-unauthenticated",
    is_flag=True,
    help="Listen beyond loopback without a write token (anyone reaching the port may write).",
)
@click.option(
    "--cors-origin",
    "cors_origins",
    multiple=True,
    metavar="ORIGIN",
    help="Let pages at ORIGIN (scheme://host[:port], or * for any) read the API. Repeatable.",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME",
    help="Without a write token, also answer requests whose Host is NAME (besides loopback and "
    "--host). Repeatable.",
)
@click.option(
    "--request-timeout",
    default=10.0,
    show_default=True,
    type=click.FloatRange(0.1, 3600),
    help="Seconds a request may take to arrive whole (else 408).",
)
@click.option(
    "--max-connections",
    default=64,
    show_default=True,
    type=click.IntRange(1, 10_000),
    help="Connections served at once (one more is answered 503).",
)
@click.pass_obj
def command(
    edge: Edge,
    *,
    host: str,
    port: int,
    db: str,
    token_env: str,
    read_token_env: str,
    allow_unauthenticated: bool,
    cors_origins: tuple[str, ...],
    allowed_hosts: tuple[str, ...],
    request_timeout: float,
    max_connections: int,
) -> None:
    """Run a status collector that `reporting.status.endpoint` can point at.

    Jobs send their submit record (POST /api/jobs), their lifecycle events (PUT /api/jobs/ID;
    the last one carries the job report: results, verdicts, diagnosis, files in S3) and, with
    `reporting.status.logging-stream-interval`, their logs. Everything is kept in the SQLite
    file --db (uploaded bytes in PATH-uploads/). In a browser: / lists the jobs, /jobs/ID shows
    one; GET /api/jobs, /api/jobs/ID and /api/events are the JSON API.

    With $SRTCTL_STATUS_TOKEN set every request but / and /api/health needs
    `Authorization: Bearer <token>`; a read token ($SRTCTL_STATUS_READ_TOKEN) may only read.
    Without a write token the collector listens only on loopback, unless
    --allow-unauthenticated, and answers only requests whose Host is loopback, --host or an
    --allowed-host and whose Origin (if any) is loopback or a --cors-origin (DNS rebinding).
    Runs in the foreground until Ctrl-C or SIGTERM.
    """
    from srt_cli.collector import (
        CollectorConfigError,
        CollectorSettings,
        CollectorStartError,
        Tokens,
        open_collector,
    )
    from srt_cli.collector.auth import is_loopback
    from srt_cli.errors import CliUsageError

    tokens = Tokens(
        write=edge.environ.get(token_env) or None,
        read=edge.environ.get(read_token_env) or None,
        write_env=token_env,
        read_env=read_token_env,
    )
    settings = CollectorSettings(
        db_path=edge.cwd / Path(db).expanduser(),
        host=host,
        port=port,
        tokens=tokens,
        allow_unauthenticated=allow_unauthenticated,
        cors_origins=cors_origins,
        allowed_hosts=allowed_hosts,
        request_timeout=request_timeout,
        max_connections=max_connections,
    )
    try:
        collector = open_collector(settings, log=_log_line)
    except CollectorConfigError as exc:
        raise CliUsageError(str(exc)) from exc
    except CollectorStartError as exc:
        raise StatusServerStartError(str(exc)) from exc
    if tokens.write is not None:
        auth = f"auth on (write token ${token_env}"
        auth += f", read token ${read_token_env})" if tokens.read is not None else ")"
    elif is_loopback(host):
        auth = f"auth off (${token_env} is not set; loopback only)"
    else:
        auth = "auth off (--allow-unauthenticated)"
    click.echo(
        f"srtctl status-server: listening on {collector.url}, db {collector.db_path}, {auth}"
    )
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        collector.serve_forever()
    except (KeyboardInterrupt, _TerminatedError):
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        collector.close()
    click.echo("srtctl status-server: stopped", err=True)
