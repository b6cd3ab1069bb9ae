"""A minimal HTTP/1.1 client on asyncio protocols (stdlib only), for the sa-bench hot path.

Why not httpx here: at 64-1024 concurrent streams on 2 cores, httpx spends most of the client's
CPU in its connection pool and stream machinery (see the README's capacity numbers). This client
parses responses inside `data_received` and hands body bytes to a sink synchronously, so a
streamed response costs one await per request, not one per chunk, and every chunk is stamped
with `perf_counter()` the moment it arrives.

Scope: `POST` with a body, `http://` and `https://`, responses delimited by chunked encoding,
Content-Length or connection close; keep-alive connection reuse (optional).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from collections import deque
from typing import Protocol
from urllib.parse import urlsplit

from srt_bench.errors import BenchConfigError

__all__ = ["HttpError", "Pool", "Sink"]

_HEAD, _CHUNK_SIZE, _CHUNK_DATA, _CHUNK_CRLF, _TRAILER, _LENGTH, _UNTIL_CLOSE, _DONE = range(8)
_MAX_HEAD = 64 * 1024


class HttpError(Exception):
    """Transport-level failure of one request (connect, protocol, timeout, early close)."""


class Sink(Protocol):
    """Receives one response as it arrives (called from the event loop's protocol callbacks)."""

    def on_status(self, status: int) -> None: ...
    def on_body(self, data: bytes, now: float) -> None: ...


class _Connection(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.keep_alive = True
        self._buf = bytearray()
        self._state = _DONE
        self._remaining = 0
        self._sink: Sink | None = None
        self._done: asyncio.Future[None] | None = None
        self._got_bytes = False

    # -- asyncio callbacks ------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._done is None or self._done.done():
            return
        if self._state == _UNTIL_CLOSE:
            self._finish()
        else:
            what = "before any response byte" if not self._got_bytes else "mid-response"
            self._fail(HttpError(f"connection closed {what}" + (f": {exc}" if exc else "")))

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        if self._sink is None:
            # Bytes nobody asked for: the server broke the protocol; never reuse this socket.
            self.keep_alive = False
            return
        self._got_bytes = True
        buf = self._buf
        buf += data
        pos = 0
        out: list[bytes] = []
        try:
            while True:
                state = self._state
                if state == _HEAD:
                    end = buf.find(b"\r\n\r\n", pos)
                    if end < 0:
                        if len(buf) > _MAX_HEAD:
                            raise HttpError("response head larger than 64 KiB")
                        break
                    self._parse_head(bytes(buf[pos:end]))
                    pos = end + 4
                elif state == _CHUNK_SIZE:
                    end = buf.find(b"\r\n", pos)
                    if end < 0:
                        break
                    size_text = bytes(buf[pos:end]).split(b";", 1)[0].strip()
                    try:
                        size = int(size_text, 16)
                    except ValueError as exc:
                        raise HttpError(f"bad chunk size {size_text!r}") from exc
                    pos = end + 2
                    if size == 0:
                        self._state = _TRAILER
                    else:
                        self._remaining = size
                        self._state = _CHUNK_DATA
                elif state == _CHUNK_DATA:
                    take = min(self._remaining, len(buf) - pos)
                    if take == 0:
                        break
                    out.append(bytes(buf[pos : pos + take]))
                    pos += take
                    self._remaining -= take
                    if self._remaining == 0:
                        self._state = _CHUNK_CRLF
                elif state == _CHUNK_CRLF:
                    if len(buf) - pos < 2:
                        break
                    pos += 2
                    self._state = _CHUNK_SIZE
                elif state == _TRAILER:
                    end = buf.find(b"\r\n", pos)
                    if end < 0:
                        break
                    empty = end == pos
                    pos = end + 2
                    if empty:
                        self._state = _DONE
                elif state == _LENGTH:
                    take = min(self._remaining, len(buf) - pos)
                    if take:
                        out.append(bytes(buf[pos : pos + take]))
                        pos += take
                        self._remaining -= take
                    if self._remaining == 0:
                        self._state = _DONE
                    else:
                        break
                elif state == _UNTIL_CLOSE:
                    if pos < len(buf):
                        out.append(bytes(buf[pos:]))
                        pos = len(buf)
                    break
                else:  # _DONE
                    break
        except HttpError as exc:
            del buf[:]
            self.keep_alive = False
            self._fail(exc)
            if self.transport is not None:
                self.transport.abort()
            return
        del buf[:pos]
        if out and self._sink is not None:
            self._sink.on_body(out[0] if len(out) == 1 else b"".join(out), now)
        if self._state == _DONE:
            if buf:
                self.keep_alive = False  # extra bytes after the response: do not reuse
            self._finish()

    # -- parsing ----------------------------------------------------------------------------
    def _parse_head(self, head: bytes) -> None:
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
            raise HttpError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
        try:
            status = int(parts[1])
        except ValueError as exc:
            raise HttpError(f"bad status code {parts[1]!r}") from exc
        chunked = False
        length: int | None = None
        keep = parts[0] == b"HTTP/1.1"
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            key = name.strip().lower()
            if key == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
            elif key == b"content-length":
                length = int(value.strip())
            elif key == b"connection":
                v = value.strip().lower()
                keep = v != b"close" and (keep or v == b"keep-alive")
        if not keep:
            self.keep_alive = False
        assert self._sink is not None
        self._sink.on_status(status)
        if 100 <= status < 200:
            return  # interim response; the real head follows
        if chunked:
            self._state = _CHUNK_SIZE
        elif length is not None:
            self._remaining = length
            self._state = _LENGTH
        else:
            self.keep_alive = False
            self._state = _UNTIL_CLOSE

    # -- request lifecycle ------------------------------------------------------------------
    def begin(self, sink: Sink, request: bytes, done: asyncio.Future[None]) -> None:
        assert self.transport is not None
        self._sink = sink
        self._done = done
        self._state = _HEAD
        self._got_bytes = False
        self._buf.clear()
        self.transport.write(request)

    @property
    def got_bytes(self) -> bool:
        return self._got_bytes

    def _finish(self) -> None:
        self._sink = None
        if self._done is not None and not self._done.done():
            self._done.set_result(None)

    def _fail(self, exc: Exception) -> None:
        self._sink = None
        self.keep_alive = False
        if self._done is not None and not self._done.done():
            self._done.set_exception(exc)


class Pool:
    """Connections to one origin. `reuse=False` sends `Connection: close` on every request."""

    def __init__(self, base_url: str, *, reuse: bool, headers: dict[str, str]) -> None:
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
        self._idle: deque[_Connection] = deque()

    def request_bytes(self, path: str, body: bytes) -> bytes:
        return (
            b"POST %s HTTP/1.1\r\n%sContent-Length: %d\r\n\r\n"
            % ((self._prefix + path).encode("latin-1"), self._headers, len(body))
            + body
        )

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            _transport, conn = await loop.create_connection(
                _Connection, self._host, self._port, ssl=self._ssl
            )
        except OSError as exc:
            raise HttpError(f"cannot connect to {self._host}:{self._port}: {exc}") from exc
        return conn

    async def send(self, request: bytes, sink: Sink, *, timeout: float) -> None:
        """Send one request and feed its response to `sink`; raises `HttpError`."""
        loop = asyncio.get_running_loop()
        for attempt in range(2):
            reused = False
            conn: _Connection | None = None
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
                if conn.transport is not None:
                    conn.transport.abort()
                # A kept-alive socket the server had already closed: retry once on a new one.
                if reused and attempt == 0 and not conn.got_bytes:
                    continue
                raise
            finally:
                timer.cancel()
            if self._reuse and conn.keep_alive and not conn.closed:
                self._idle.append(conn)
            elif conn.transport is not None:
                conn.transport.close()
            return

    @staticmethod
    def _expire(conn: _Connection, done: asyncio.Future[None], timeout: float) -> None:
        if not done.done():
            done.set_exception(HttpError(f"no complete response within {timeout:g} s"))
        conn.keep_alive = False
        if conn.transport is not None:
            conn.transport.abort()

    async def aclose(self) -> None:
        while self._idle:
            conn = self._idle.pop()
            if conn.transport is not None:
                conn.transport.close()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(0)
