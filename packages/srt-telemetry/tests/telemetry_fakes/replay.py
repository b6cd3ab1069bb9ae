"""A real HTTP server on 127.0.0.1 that replays recorded exporter bodies (a test fake)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ReplayServer:
    """Serves `bodies[path]` with status 200; `status[path]` overrides the status code."""

    def __init__(self, bodies: dict[str, str], status: dict[str, int] | None = None) -> None:
        self.bodies = dict(bodies)
        self.status = dict(status or {})
        self.hits: dict[str, int] = {}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                outer.hits[path] = outer.hits.get(path, 0) + 1
                body = outer.bodies.get(path)
                code = outer.status.get(path, 200 if body is not None else 404)
                data = (body or "").encode()
                self.send_response(code)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@contextmanager
def replay_server(
    bodies: dict[str, str], status: dict[str, int] | None = None
) -> Iterator[ReplayServer]:
    server = ReplayServer(bodies, status)
    server.thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
