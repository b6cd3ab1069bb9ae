"""Raw HTTP/1.1 on asyncio streams: read one request, render a response head or body.

Enough of HTTP/1.1 for the clients that talk to an engine (Rust routers on hyper/reqwest,
httpx, aiohttp, curl): keep-alive by default, ``Connection: close``, ``Content-Length`` and
chunked request bodies, ``Expect: 100-continue``, chunked responses for SSE streams.
"""

from __future__ import annotations

import asyncio

import msgspec

__all__ = [
    "HttpError",
    "Request",
    "chunk",
    "json_response",
    "read_request",
    "sse_head",
    "text_response",
]

_MAX_HEAD = 64 * 1024
_MAX_BODY = 256 * 1024 * 1024
_REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    413: "Payload Too Large",
    500: "Internal Server Error",
}


class HttpError(Exception):
    """A request that cannot be read; answered with ``status`` and the connection closed."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Request(msgspec.Struct, frozen=True, kw_only=True):
    method: str
    #: The path without the query string.
    path: str
    query: str
    headers: dict[str, str]
    body: bytes
    keep_alive: bool


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    size = 0
    while True:
        line = await reader.readuntil(b"\r\n")
        try:
            n = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError as exc:
            raise HttpError(400, f"bad chunk size {line[:20]!r}") from exc
        if n == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
                pass
            return b"".join(parts)
        size += n
        if size > _MAX_BODY:
            raise HttpError(413, f"body over {_MAX_BODY} bytes")
        parts.append(await reader.readexactly(n))
        await reader.readexactly(2)


async def read_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> Request | None:
    """The next request on the connection; None when the client closed it between requests."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial.strip():
            raise HttpError(400, "connection closed inside a request head") from exc
        return None
    except asyncio.LimitOverrunError as exc:
        raise HttpError(413, f"request head over {_MAX_HEAD} bytes") from exc
    lines = head[:-4].decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise HttpError(400, f"bad request line {lines[0][:80]!r}")
    method, target, version = parts
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep:
            raise HttpError(400, f"bad header line {line[:80]!r}")
        headers[name.strip().lower()] = value.strip()
    connection = headers.get("connection", "").lower()
    keep_alive = connection != "close" if version == "HTTP/1.1" else connection == "keep-alive"
    if headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = await _read_chunked(reader)
    else:
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError as exc:
            raise HttpError(400, f"bad content-length {headers['content-length']!r}") from exc
        if not 0 <= length <= _MAX_BODY:
            raise HttpError(413, f"content-length {length} out of range")
        body = await reader.readexactly(length) if length else b""
    path, _, query = target.partition("?")
    return Request(
        method=method, path=path, query=query, headers=headers, body=body, keep_alive=keep_alive
    )


def _head(status: int, content_type: str, length: int, keep_alive: bool) -> bytes:
    reason = _REASONS.get(status, "Unknown")
    connection = "keep-alive" if keep_alive else "close"
    return (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\n"
        f"content-length: {length}\r\nconnection: {connection}\r\n\r\n"
    ).encode("latin-1")


def json_response(status: int, obj: object, *, keep_alive: bool = True) -> bytes:
    body = msgspec.json.encode(obj)
    return _head(status, "application/json", len(body), keep_alive) + body


def text_response(status: int, text: str, *, content_type: str, keep_alive: bool = True) -> bytes:
    body = text.encode()
    return _head(status, content_type, len(body), keep_alive) + body


def sse_head(*, keep_alive: bool = True) -> bytes:
    connection = "keep-alive" if keep_alive else "close"
    return (
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
        f"cache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: {connection}\r\n\r\n"
    ).encode("latin-1")


def chunk(data: bytes) -> bytes:
    """One HTTP chunk (``b""`` is the last chunk)."""
    return b"%x\r\n%s\r\n" % (len(data), data)
