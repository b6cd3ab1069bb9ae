"""The collector's HTTP server: standard-library ``ThreadingHTTPServer`` around the route table.

(Over 400 lines: the handler's request rules, deadlines and the connection cap are one unit.)

At most ``max_connections`` connections are served at once; one more is answered 503 and
closed without a thread. Each request must arrive whole (request line, headers and body) within
``request_timeout`` seconds of its first wait: a request still incomplete then is answered 408
and its connection closed (a keep-alive connection that stays idle is closed without an answer).

Per request, in this order: a query string that carries a credential is refused (400; tokens go in
``Authorization``); without a write token, a request whose ``Host`` or ``Origin`` is not this
collector's is refused (403, :mod:`~srt_cli.collector.rebinding`); CORS preflight (OPTIONS) is
answered without a token; then the bearer token is checked (except for reads of ``/`` and
``/api/health``), before anything of the body is read and before routing, so an unauthenticated
caller learns nothing about routes or jobs; then ``Content-Length`` is checked (above 1 MiB is 413
without reading the body; a chunked body is 411; a repeated one with different values, or one that
is not a plain byte count, is 400); then the body is read and routed. GET and HEAD answers carry
CORS headers for the allowed origins.

A request the standard library's parser refuses (a bad request line, headers too long or too
many, an unknown method, HTTP/0.9 or 2.0) gets the same JSON ``{"detail": ...}`` answer, always
a 4xx: an unknown method is 405 with ``Allow`` (not 501), an unsupported version 400 (not 505).
A 5xx means a bug or a broken disk, never a bad request.

Every request is reported through ``log`` (one line), never printed; every line is rendered by
:func:`~srt_cli.collector.redact.render_log_line` first, so no token reaches the log.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from socketserver import TCPServer
from typing import Final
from urllib.parse import urlsplit

from srt_cli.collector.auth import Tokens, check_request, check_startup, needs_auth
from srt_cli.collector.cors import check_origins, cors_headers, preflight_headers
from srt_cli.collector.errors import ApiError, CollectorStartError
from srt_cli.collector.protocol import MAX_BODY, shown
from srt_cli.collector.rebinding import check_addressed
from srt_cli.collector.redact import check_query, render_log_line
from srt_cli.collector.routes import App, Request, Response, error_response, handle
from srt_cli.collector.store import StatusStore
from srt_cli.collector.uploads import UploadStore, uploads_root

__all__ = ["Collector", "CollectorSettings", "open_collector"]

#: ``log(line)``: one line per request and per server-side failure.
LineLog = Callable[[str], None]

#: Seconds an idle keep-alive connection is kept open.
IDLE_TIMEOUT: Final = 30.0
#: After a refusal that comes before the body is read (401, 403, 413), at most this many bytes of
#: it are read and dropped (with a short timeout) so the client sees the answer instead of a
#: connection reset.
_DRAIN_LIMIT: Final = 8 * MAX_BODY
_DRAIN_TIMEOUT: Final = 1.0
#: The methods the collector serves (each has a ``do_<METHOD>``); the ``Allow`` of a 405.
SERVED_METHODS: Final = ("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS")
#: What the standard library's parser would answer with a 5xx, answered with a 4xx instead:
#: both are the client's request, not a fault of the server.
_PARSER_STATUS: Final[dict[int, HTTPStatus]] = {
    HTTPStatus.NOT_IMPLEMENTED: HTTPStatus.METHOD_NOT_ALLOWED,
    HTTPStatus.HTTP_VERSION_NOT_SUPPORTED: HTTPStatus.BAD_REQUEST,
}
#: A byte count of more digits than this is above MAX_BODY anyway (and int() refuses 4300+).
_MAX_LENGTH_DIGITS: Final = 18


def _byte_count(values: list[str]) -> int | None:
    """The one byte count in ``Content-Length`` values, or None when there is none."""
    if not values:
        return None
    counts = {value.strip() for value in values}
    if len(counts) > 1:
        given = ", ".join(shown(value, 40) for value in values[:4])
        raise ApiError(
            400,
            f"Content-Length is given {len(values)} times with different values ({given}); "
            "send it once",
        )
    raw = counts.pop()
    if not (raw.isascii() and raw.isdigit()):
        raise ApiError(400, f"Content-Length {shown(raw, 40)} is not a byte count")
    if len(raw) > _MAX_LENGTH_DIGITS:
        raise ApiError(
            413,
            f"Content-Length has {len(raw)} digits; the collector accepts at most {MAX_BODY} bytes",
        )
    return int(raw)


def _no_log(line: str) -> None:
    """A :data:`LineLog` that drops everything."""


@dataclass(frozen=True, kw_only=True)
class CollectorSettings:
    """Everything the collector is started with (tokens already read from the environment)."""

    db_path: Path
    host: str = "127.0.0.1"
    port: int = 8080
    tokens: Tokens = field(default_factory=lambda: Tokens(write=None, read=None))
    allow_unauthenticated: bool = False
    cors_origins: tuple[str, ...] = ()
    #: Names a tokenless collector answers to besides loopback and its own address.
    allowed_hosts: tuple[str, ...] = ()
    #: Seconds a request may take to arrive whole (else 408).
    request_timeout: float = 10.0
    #: Connections served at once (one more is answered 503).
    max_connections: int = 64


#: The answer to a connection over the cap (written on the socket, no thread started).
_BUSY: Final = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
    b"Retry-After: 1\r\nConnection: close\r\nContent-Length: 66\r\n\r\n"
    b'{"detail": "too many open connections; retry in a second please"}\n'
)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64
    # With SO_REUSEPORT a second collector could share the port silently (some Python versions
    # turn it on for HTTPServer); "already in use" must be an error.
    allow_reuse_port = False
    #: Set by :func:`open_collector` once the database is open, before serving.
    app: App

    def __init__(
        self, settings: CollectorSettings, log: LineLog, family: socket.AddressFamily
    ) -> None:
        self.address_family = family
        self.settings = settings
        self._log = log
        self.secrets = (settings.tokens.write, settings.tokens.read)
        self._open = 0
        self._open_lock = threading.Lock()
        super().__init__((settings.host, settings.port), _Handler)

    def verify_request(self, request: object, client_address: object) -> bool:
        """Under the connection cap a connection is served; over it, 503 and closed."""
        with self._open_lock:
            if self._open < self.settings.max_connections:
                self._open += 1
                return True
        self.log(f"{client_address}: 503, {self.settings.max_connections} connections are open")
        with contextlib.suppress(OSError):
            if isinstance(request, socket.socket):
                request.settimeout(0.5)
                request.sendall(_BUSY)
        return False

    def process_request_thread(self, request: object, client_address: object) -> None:
        try:
            super().process_request_thread(request, client_address)  # type: ignore[arg-type]
        finally:
            with self._open_lock:
                self._open -= 1

    def log(self, line: str) -> None:
        """Report one line, rendered so that it shows no token (the only way lines leave)."""
        self._log(render_log_line(line, self.secrets))

    def handle_error(self, request: object, client_address: object) -> None:
        # socketserver would print a traceback to stderr (a client that went away mid-answer).
        exc = sys.exc_info()[1]
        self.log(f"error: connection {client_address}: {type(exc).__name__}: {exc}")

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host's FQDN (a DNS lookup); the name is unused.
        TCPServer.server_bind(self)
        self.server_name = self.settings.host
        self.server_port = int(self.server_address[1])


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = IDLE_TIMEOUT
    server_version = "srtctl-status-server"
    sys_version = ""
    server: _HTTPServer
    #: Whether the current request's body has been read off the connection.
    _body_read = False
    #: Set by the deadline timer: the request did not arrive whole in time.
    _expired = False
    #: The current request's deadline timer (cancelled once the request has arrived whole).
    _deadline: threading.Timer | None = None

    def handle_one_request(self) -> None:
        """One request under its deadline: when it passes, reading is shut down, so a read that
        waits returns at once; what arrived by then is answered 408 (nothing: closed)."""
        self._expired = False
        timer = threading.Timer(self.server.settings.request_timeout, self._expire)
        timer.daemon = True
        self._deadline = timer
        timer.start()
        try:
            self.raw_requestline = b""
            super().handle_one_request()
        finally:
            timer.cancel()
        if self._expired:
            self.close_connection = True

    def _timed_out(self) -> bool:
        """Whether the deadline timer fired (set from its thread)."""
        return self._expired

    def _expire(self) -> None:
        self._expired = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RD)

    def _request_timeout(self) -> None:
        """Answer 408 for a request that did not arrive whole in time."""
        limit = self.server.settings.request_timeout
        self.close_connection = True
        self._body_read = True  # nothing more will be read from this connection
        self._send(error_response(ApiError(408, f"the request did not arrive within {limit:g} s")))

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in two writes; without this, Nagle's algorithm and the
        # client's delayed ACK add about 40 ms to every answer.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: object) -> None:
        self.server.log(f"{self.client_address[0]} {format % args}")

    def parse_request(self) -> bool:
        if self._timed_out():  # the request line stopped at the deadline
            self.command, self.request_version = "GET", "HTTP/1.1"
            self.requestline = ""
            self._request_timeout()
            return False
        if not super().parse_request():
            return False
        if self._timed_out():  # the headers stopped at the deadline
            self._request_timeout()
            return False
        if self.request_version == "HTTP/0.9":
            self.send_error(HTTPStatus.BAD_REQUEST, "HTTP/0.9 is not served; use HTTP/1.1")
            return False
        # The parser takes a line without ':' as the start of the body, and keeps folded lines.
        if self.headers.defects or any("\n" in value for value in self.headers.values()):
            self.send_error(
                HTTPStatus.BAD_REQUEST,
                "a header line is malformed (no ':', a space in a name, or a folded line); "
                "send one 'Name: value' per line",
            )
            return False
        return True

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The standard library's refusals (bad request line, headers, method, version) as
        the collector's own JSON answers, always 4xx."""
        status = HTTPStatus(_PARSER_STATUS.get(code, code))
        detail = message or status.phrase
        if code == HTTPStatus.NOT_IMPLEMENTED:
            detail = f"{shown(self.command or '', 40)} is not served; allowed: " + ", ".join(
                SERVED_METHODS
            )
        elif code == HTTPStatus.HTTP_VERSION_NOT_SUPPORTED:
            detail = f"{detail}; use HTTP/1.1"
        detail = detail if len(detail) <= 300 else f"{detail[:300]}..."
        if self.request_version == "HTTP/0.9":
            self.request_version = "HTTP/1.1"  # so the answer has a status line and headers
        self.log_error("code %d, message %s", status, detail)
        body = json.dumps({"detail": detail}).encode()
        self.send_response(status)
        if status == HTTPStatus.METHOD_NOT_ALLOWED:
            self.send_header("Allow", ", ".join(SERVED_METHODS))
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        # The rest of the request is unread: read and drop a bounded amount so the client
        # sees this answer instead of a connection reset.
        self.wfile.flush()
        self._drain(_DRAIN_LIMIT)

    # One dispatcher for every method: auth, size and routing rules do not depend on it.
    def do_GET(self) -> None:
        self._dispatch()

    def do_HEAD(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def do_PATCH(self) -> None:
        self._dispatch()

    def do_OPTIONS(self) -> None:
        self._dispatch()

    def _dispatch(self) -> None:
        settings = self.server.settings
        origin = self.headers.get("Origin")
        self._body_read = False
        path = self.path.partition("?")[0]
        try:
            try:
                parts = urlsplit(self.path)
            except ValueError as exc:
                raise ApiError(
                    400, f"the request target {shown(self.path)} is not a URL: {exc}"
                ) from exc
            path = parts.path
            check_query(parts.query, self.server.secrets)
            if settings.tokens.write is None:
                check_addressed(
                    method=self.command,
                    host=self.headers.get("Host"),
                    origin=origin,
                    bound=settings.host,
                    allowed_hosts=settings.allowed_hosts,
                    cors_origins=settings.cors_origins,
                )
            if self.command == "OPTIONS":
                headers = preflight_headers(
                    settings.cors_origins, origin, self.headers.get("Access-Control-Request-Method")
                )
                response = Response(status=204, body=b"", headers=headers)
            else:
                if needs_auth(self.command, path):
                    check_request(settings.tokens, self.command, self.headers.get("Authorization"))
                body = self._read_body()
                request = Request(
                    method=self.command,
                    path=path,
                    query=parts.query,
                    body=body,
                    content_type=self.headers.get("Content-Type"),
                )
                response = handle(request, self.server.app)
        except ApiError as error:
            response = error_response(error)
        except Exception as exc:  # a bug or a broken disk: answer 500, report it, keep serving
            self.server.log(f"error: {self.command} {path} failed: {type(exc).__name__}: {exc}")
            response = error_response(ApiError(500, f"internal error: {type(exc).__name__}"))
        if self.command in ("GET", "HEAD"):
            extra = cors_headers(settings.cors_origins, self.command, origin)
            response = Response(
                status=response.status,
                body=response.body,
                content_type=response.content_type,
                headers={**response.headers, **extra},
            )
        unread = self._unread_body()
        if unread:
            # Refused before the body was read (401, 403, 413, ...): what is left of the body
            # must not be parsed as the next request, so the connection ends after the answer.
            self.close_connection = True
        self._send(response)
        if unread:
            self._drain(unread)

    def _unread_body(self) -> int:
        """How much of a body is still unread (at most the drain limit when unknown)."""
        if self._body_read:
            return 0
        if self.headers.get("Transfer-Encoding"):
            return _DRAIN_LIMIT
        try:
            length = _byte_count(self.headers.get_all("Content-Length") or [])
        except ApiError:
            return _DRAIN_LIMIT  # its length is not known: the connection cannot be reused
        return length or 0

    def _read_body(self) -> bytes:
        """The body within the size limit, or :class:`ApiError` (411, 400, 413)."""
        if self.headers.get("Transfer-Encoding"):
            raise ApiError(411, "send the body with a Content-Length (chunked bodies are refused)")
        length = _byte_count(self.headers.get_all("Content-Length") or [])
        if length is None:
            self._body_read = True
            if self._deadline is not None:
                self._deadline.cancel()  # no body: the request has arrived whole
            return b""
        if length > MAX_BODY:
            raise ApiError(
                413,
                f"the body is {length} bytes; the collector accepts at most {MAX_BODY} "
                "(send log chunks of at most 1 MiB)",
            )
        body = self.rfile.read(length)
        self._body_read = True
        if self._deadline is not None and len(body) == length:
            self._deadline.cancel()  # arrived whole: routing and the answer may take longer
        if len(body) != length:
            self.close_connection = True
            if self._expired:
                limit = self.server.settings.request_timeout
                raise ApiError(408, f"the request did not arrive within {limit:g} s")
            raise ApiError(400, f"the body ended after {len(body)} of {length} bytes")
        return body

    def _send(self, response: Response) -> None:
        self.send_response(response.status)
        for key, value in response.headers.items():
            self.send_header(key, value)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        self.send_header("Cache-Control", "no-store")
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD" and response.body:
            self.wfile.write(response.body)

    def _drain(self, length: int) -> None:
        # Reading and dropping (never keeping) what the client is still sending: without this the
        # kernel resets the connection and the client never sees the answer.
        left = min(length, _DRAIN_LIMIT)
        self.connection.settimeout(_DRAIN_TIMEOUT)
        try:
            while left > 0:
                got = self.rfile.read1(min(left, 64 * 1024))
                if not got:
                    return
                left -= len(got)
        except OSError:  # the client stopped sending or went away: nothing left to protect
            return


class Collector:
    """A collector bound to its port with its database open; :meth:`serve_forever` serves."""

    def __init__(self, server: _HTTPServer, store: StatusStore) -> None:
        self._server = server
        self._store = store
        host, port = server.settings.host, server.server_port
        shown = f"[{host}]" if ":" in host else host
        #: The base URL to give ``reporting.status.endpoint`` (the real port when 0 was asked).
        self.url = f"http://{shown}:{port}"
        self.port = port
        self.db_path = store.path
        self.uploads_root = server.app.uploads.root

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        """Serve until :meth:`shutdown` is called from another thread (or an exception)."""
        self._server.serve_forever(poll_interval=poll_interval)

    def shutdown(self) -> None:
        """Make :meth:`serve_forever` return; call from another thread."""
        self._server.shutdown()

    def close(self) -> None:
        """Stop listening and close the database (requests still running get an error)."""
        self._server.server_close()
        self._store.close()


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def _bind_problem(settings: CollectorSettings, exc: OSError) -> str:
    where = f"{settings.host}:{settings.port}"
    if exc.errno == errno.EADDRINUSE:
        return (
            f"--port {settings.port}: {where} is already in use; stop the other server or pick "
            "another --port (0 picks a free one)"
        )
    if exc.errno == errno.EACCES:
        return f"--port {settings.port}: not allowed to listen on {where}; use a port above 1023"
    if exc.errno == errno.EADDRNOTAVAIL or isinstance(exc, socket.gaierror):
        return (
            f"--host {settings.host}: not an address of this machine ({exc.strerror or exc}); "
            "use 127.0.0.1, 0.0.0.0 or one of this machine's addresses"
        )
    return f"cannot listen on {where}: {exc}"


def open_collector(
    settings: CollectorSettings,
    *,
    log: LineLog = _no_log,
    clock: Callable[[], float] = time.time,
) -> Collector:
    """Check the settings, bind the port and open the database.

    :class:`~srt_cli.collector.errors.CollectorConfigError` for settings that must not start
    (no write token beyond loopback, a read token alone); :class:`CollectorStartError` when the
    port or the database cannot be used.
    """
    check_startup(
        settings.tokens, settings.host, allow_unauthenticated=settings.allow_unauthenticated
    )
    settings = dataclasses.replace(settings, cors_origins=check_origins(settings.cors_origins))
    if not 0 <= settings.port <= 65535:
        raise CollectorStartError(f"--port {settings.port}: not a TCP port (0-65535)")
    db_path = settings.db_path.expanduser()
    try:
        server = _HTTPServer(settings, log, _family(settings.host))
    except OSError as exc:
        raise CollectorStartError(_bind_problem(settings, exc)) from exc
    try:
        store = StatusStore(db_path, clock=clock)
    except CollectorStartError:
        server.server_close()
        raise
    server.app = App(store=store, uploads=UploadStore(uploads_root(db_path)))
    return Collector(server, store)
