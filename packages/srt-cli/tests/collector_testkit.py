"""Helpers for the status-server tests: an in-process collector on a free port, raw requests.

Imported by name (conftest puts this folder on sys.path).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from srt_cli.collector import Collector, CollectorSettings, Tokens, open_collector

WRITE = "w-token-123"
READ = "r-token-456"
ORIGIN = "http://dash.example:3000"


def settings(
    tmp_path: Path,
    *,
    write: str | None = None,
    read: str | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    allow_unauthenticated: bool = False,
    cors_origins: tuple[str, ...] = (),
) -> CollectorSettings:
    return CollectorSettings(
        db_path=tmp_path / "state" / "status.db",
        host=host,
        port=port,
        tokens=Tokens(write=write, read=read),
        allow_unauthenticated=allow_unauthenticated,
        cors_origins=cors_origins,
    )


@contextmanager
def serving(config: CollectorSettings, log: list[str] | None = None) -> Iterator[Collector]:
    """The collector serving from a thread until the block ends (then stopped and closed)."""
    lines = log if log is not None else []
    collector = open_collector(config, log=lines.append)
    thread = threading.Thread(target=collector.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield collector
    finally:
        collector.shutdown()
        thread.join(timeout=10)
        collector.close()
        assert not thread.is_alive()


def raw_request(port: int, head: str, body: bytes = b"") -> tuple[int, dict[str, str], bytes]:
    """Send ``head`` (request line + headers, without the blank line) and ``body`` as is; the
    status, headers (lower-case names) and body of the answer. For what httpx cannot send."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(head.encode() + b"\r\n\r\n" + body)
        data = b""
        while b"\r\n\r\n" not in data:
            got = sock.recv(65536)
            assert got, f"connection closed before the answer's headers: {data!r}"
            data += got
        header_blob, _, rest = data.partition(b"\r\n\r\n")
        status_line, *header_lines = header_blob.decode().split("\r\n")
        headers = {}
        for line in header_lines:
            key, _, value = line.partition(":")
            headers[key.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(rest) < length:
            got = sock.recv(65536)
            assert got, "connection closed inside the answer's body"
            rest += got
    return int(status_line.split()[1]), headers, rest[:length]


def busy_port() -> tuple[socket.socket, int]:
    """A listening socket on 127.0.0.1 and its port (close it when done)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    return sock, sock.getsockname()[1]
