"""A real status collector on 127.0.0.1 for the reporting tests (stdlib http.server).

It implements the parts of the collector contract the reporter and the log streamer use: job
PUT/POST, the log chunk route and the capture route. Behaviour knobs (``status_code``,
``delay``, ``fail_log_posts``) let a test script a collector that refuses, redirects, stalls or
drops chunks. Every request is recorded with its headers and body.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes


@dataclass
class CollectorState:
    requests: list[Request] = field(default_factory=list)
    #: status returned for job PUTs (200 = accepted)
    status_code: int = 200
    #: seconds every request waits before answering
    delay: float = 0.0
    #: number of upcoming log-chunk POSTs answered with HTTP 500
    fail_log_posts: int = 0
    #: job id put in log acks instead of the real one (a confused collector)
    ack_job_id: str | None = None
    #: a job PUT whose body has this field is refused with 422 (a collector older than it)
    refuse_field: str | None = None
    #: file -> bytes stored, and the final flag seen
    logs: dict[str, bytearray] = field(default_factory=dict)
    finals: set[str] = field(default_factory=set)
    captures: dict[str, bytearray] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def of(self, method: str, prefix: str) -> list[Request]:
        with self.lock:
            return [r for r in self.requests if r.method == method and r.path.startswith(prefix)]


def _handler(state: CollectorState, job_id: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # quiet
            return

        def _reply(self, code: int, doc: object, headers: dict[str, str] | None = None) -> None:
            body = json.dumps(doc).encode()
            self.send_response(code)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _record(self) -> Request:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            parts = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
            req = Request(self.command, parts.path, query, dict(self.headers.items()), body)
            with state.lock:
                state.requests.append(req)
            if state.delay:
                time.sleep(state.delay)
            return req

        def do_PUT(self) -> None:
            req = self._record()
            code = state.status_code
            if state.refuse_field is not None and state.refuse_field in json.loads(req.body):
                self._reply(
                    422, {"detail": f"Object contains unknown field `{state.refuse_field}`"}
                )
                return
            if 300 <= code < 400:
                self._reply(code, {}, {"Location": "http://127.0.0.1:9/login"})
                return
            doc = json.loads(req.body) if code == 200 else {"detail": "no"}
            self._reply(
                code, {"job_id": job_id, "status": doc.get("status")} if code == 200 else doc
            )

        def do_POST(self) -> None:
            req = self._record()
            if req.path == "/api/jobs":
                self._reply(201, {"job_id": job_id, "status": "submitted"})
            elif req.path == f"/api/jobs/{job_id}/logs":
                with state.lock:
                    if state.fail_log_posts > 0:
                        state.fail_log_posts -= 1
                        self._reply(500, {"detail": "scripted failure"})
                        return
                    name, offset = req.query["file"], int(req.query["offset"])
                    stored = state.logs.setdefault(name, bytearray())
                    fresh = offset == len(stored)
                    if fresh:
                        stored.extend(req.body)
                    if req.query.get("final") == "1":
                        state.finals.add(name)
                ack_id = state.ack_job_id or job_id
                self._reply(200, {"job_id": ack_id, "stored": 1 if fresh else 0})
            elif req.path == f"/api/jobs/{job_id}/captures":
                with state.lock:
                    name, offset = req.query["file"], int(req.query["offset"])
                    total = int(req.query["total"])
                    stored = state.captures.setdefault(name, bytearray())
                    if offset == len(stored):
                        stored.extend(req.body)
                    nxt = len(stored)
                self._reply(200, {"job_id": job_id, "next_offset": nxt, "complete": nxt == total})
            else:
                self._reply(404, {"detail": "not found"})

    return Handler


@contextmanager
def running_collector(job_id: str = "4242") -> Iterator[tuple[str, CollectorState]]:
    """A collector on 127.0.0.1 and a free port; yields (base URL, state)."""
    state = CollectorState()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state, job_id))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def closed_port_url() -> str:
    """A loopback URL nothing listens on (connection refused at once)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@contextmanager
def silent_server() -> Iterator[str]:
    """A loopback URL that accepts connections and never answers (a hung collector)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def _accept() -> None:
        sock.settimeout(0.05)
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            held.append(conn)

    thread = threading.Thread(target=_accept)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        sock.close()
