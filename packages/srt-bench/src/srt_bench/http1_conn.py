"""The HTTP/1.1 response parser and one request's lifecycle, apart from how bytes move (an
asyncio transport: `http1.Pool`; a socket read with kernel receive times: `http1_stamped`).

The parser runs on every arrival (`feed`) and hands body bytes to the request's `Sink` at once,
stamped with the arrival time the mover gives it. Responses are delimited by chunked encoding,
Content-Length or connection close.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from typing import Protocol

__all__ = ["Connection", "HttpError", "Sink"]

_HEAD, _CHUNK_SIZE, _CHUNK_DATA, _CHUNK_CRLF, _TRAILER, _LENGTH, _UNTIL_CLOSE, _DONE = range(8)
_MAX_HEAD = 64 * 1024


class HttpError(Exception):
    """Transport-level failure of one request (connect, protocol, timeout, early close)."""


class Sink(Protocol):
    """Receives one response as it arrives (called from the event loop's protocol callbacks)."""

    def on_status(self, status: int) -> None: ...
    def on_body(self, data: bytes, now: float) -> None: ...


class Connection(ABC):
    """One HTTP/1.1 connection's response parser and request lifecycle; a subclass moves the
    bytes (`_write`, `abort`, `close`) and calls `feed` with each arrival and its time, and
    `lost` when the connection ends."""

    def __init__(self) -> None:
        self.closed = False
        self.keep_alive = True
        self._buf = bytearray()
        self._state = _DONE
        self._remaining = 0
        self._sink: Sink | None = None
        self._done: asyncio.Future[None] | None = None
        self._got_bytes = False

    # -- the byte mover's side --------------------------------------------------------------
    @abstractmethod
    def _write(self, data: bytes) -> None: ...

    @abstractmethod
    def abort(self) -> None:
        """Drop the connection now (a broken or expired response)."""

    @abstractmethod
    def close(self) -> None:
        """Close the connection after a complete response."""

    def lost(self, exc: Exception | None) -> None:
        """The connection ended (by either side)."""
        self.closed = True
        if self._done is None or self._done.done():
            return
        if self._state == _UNTIL_CLOSE:
            self._finish()
        else:
            what = "before any response byte" if not self._got_bytes else "mid-response"
            self._fail(HttpError(f"connection closed {what}" + (f": {exc}" if exc else "")))

    def feed(self, data: bytes, now: float) -> None:
        """Bytes that arrived at `now` (`perf_counter` seconds)."""
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
            self.abort()
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
        self._sink = sink
        self._done = done
        self._state = _HEAD
        self._got_bytes = False
        self._buf.clear()
        self._write(request)

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
