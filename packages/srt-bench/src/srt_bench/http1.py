"""A minimal HTTP/1.1 client on asyncio protocols (stdlib only), for the sa-bench hot path.

Why not httpx here: at 64-1024 concurrent streams on 2 cores, httpx spends most of the client's
CPU in its connection pool and stream machinery (see the README's capacity numbers). This client
parses responses inside `data_received` and hands body bytes to a sink synchronously, so a
streamed response costs one await per request, not one per chunk, and every chunk is stamped
(`perf_counter()` seconds) as it arrives.

Scope: `POST` with a body, `http://` and `https://`, responses delimited by chunked encoding,
Content-Length or connection close (the parser: `http1_conn`); keep-alive connection reuse
(optional). With `kernel_stamps` (plain `http://` on Linux) a chunk is stamped with the time the
kernel received it, not the time a busy event loop got round to reading it (`http1_stamped`).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from collections import deque
from typing import Literal
from urllib.parse import urlsplit

from srt_bench.errors import BenchConfigError
from srt_bench.http1_conn import Connection, HttpError, Sink
from srt_bench.http1_stamped import KERNEL_STAMPS, connect_stamped

__all__ = ["HttpError", "Pool", "Sink", "Stamps"]

#: Where a chunk's arrival time comes from: the kernel's receive time, or the event loop's read.
Stamps = Literal["kernel", "loop"]


class _ProtocolConnection(Connection, asyncio.Protocol):
    """A connection whose bytes move through an asyncio transport (plain or TLS); arrivals are
    stamped when the event loop delivers them."""

    def __init__(self) -> None:
        super().__init__()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost(exc)

    def data_received(self, data: bytes) -> None:
        self.feed(data, time.perf_counter())

    def _write(self, data: bytes) -> None:
        assert self.transport is not None
        self.transport.write(data)

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


class Pool:
    """Connections to one origin. `reuse=False` sends `Connection: close` on every request;
    `kernel_stamps` stamps chunks with the kernel's receive time where it can (see `stamps`)."""

    def __init__(
        self, base_url: str, *, reuse: bool, headers: dict[str, str], kernel_stamps: bool = False
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise BenchConfigError(
                f"endpoint {base_url!r} is not an http:// or https:// URL with a host"
            )
        self._host = parts.hostname
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._ssl = ssl.create_default_context() if parts.scheme == "https" else None
        self._prefix = parts.path.rstrip("/")
        self._reuse = reuse
        host_header = self._host if parts.port is None else f"{self._host}:{self._port}"
        lines = [f"Host: {host_header}"] + [f"{k}: {v}" for k, v in headers.items()]
        if not reuse:
            lines.append("Connection: close")
        self._headers = ("\r\n".join(lines) + "\r\n").encode("latin-1")
        self._idle: deque[Connection] = deque()
        #: Kernel receive times need a plain socket we read ourselves: not TLS, Linux only.
        self.stamps: Stamps = (
            "kernel" if kernel_stamps and KERNEL_STAMPS and self._ssl is None else "loop"
        )

    def request_bytes(self, path: str, body: bytes) -> bytes:
        return (
            b"POST %s HTTP/1.1\r\n%sContent-Length: %d\r\n\r\n"
            % ((self._prefix + path).encode("latin-1"), self._headers, len(body))
            + body
        )

    async def _connect(self) -> Connection:
        if self.stamps == "kernel":
            return await connect_stamped(self._host, self._port)
        loop = asyncio.get_running_loop()
        try:
            _transport, conn = await loop.create_connection(
                _ProtocolConnection, self._host, self._port, ssl=self._ssl
            )
        except OSError as exc:
            raise HttpError(f"cannot connect to {self._host}:{self._port}: {exc}") from exc
        return conn

    async def send(self, request: bytes, sink: Sink, *, timeout: float) -> None:
        """Send one request and feed its response to `sink`; raises `HttpError`."""
        loop = asyncio.get_running_loop()
        for attempt in range(2):
            reused = False
            conn: Connection | None = None
            while self._idle:
                candidate = self._idle.pop()
                if not candidate.closed:
                    conn, reused = candidate, True
                    break
            if conn is None:
                conn = await self._connect()
            done: asyncio.Future[None] = loop.create_future()
            conn.begin(sink, request, done)
            timer = loop.call_later(timeout, self._expire, conn, done, timeout)
            try:
                await done
            except HttpError:
                conn.abort()
                # A kept-alive socket the server had already closed: retry once on a new one.
                if reused and attempt == 0 and not conn.got_bytes:
                    continue
                raise
            finally:
                timer.cancel()
            if self._reuse and conn.keep_alive and not conn.closed:
                self._idle.append(conn)
            else:
                conn.close()
            return

    @staticmethod
    def _expire(conn: Connection, done: asyncio.Future[None], timeout: float) -> None:
        if not done.done():
            done.set_exception(HttpError(f"no complete response within {timeout:g} s"))
        conn.keep_alive = False
        conn.abort()

    async def aclose(self) -> None:
        while self._idle:
            self._idle.pop().close()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(0)
