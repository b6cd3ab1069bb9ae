"""An OpenRouter-compatible chat-completions server on 127.0.0.1 with a scripted answer; it
also answers GitHub's issue search (``GET /search/issues``) with scripted pull requests."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class AIState:
    answer: str = "## Root cause\nThe decode worker ran out of memory.\n"
    status: int = 200
    bodies: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    #: GitHub search requests: (path with query, headers).
    searches: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    pull_requests: list[dict[str, Any]] = field(
        default_factory=lambda: [
            {
                "number": 4242,
                "title": "Fix decode OOM with large batches",
                "html_url": "https://github.invalid/sgl-project/sglang/pull/4242",
                "updated_at": "2026-11-30T10:00:00Z",
            }
        ]
    )


@contextmanager
def running_ai() -> Iterator[tuple[str, AIState]]:
    """Yields (base URL ending in /api/v1, state)."""
    state = AIState()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return

        def do_GET(self) -> None:
            state.searches.append((self.path, dict(self.headers.items())))
            if self.path.startswith("/search/issues?"):
                payload, code = json.dumps({"items": state.pull_requests}).encode(), 200
            else:
                payload, code = b'{"message": "Not Found"}', 404
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length))
            state.bodies.append(body)
            state.headers.append(dict(self.headers.items()))
            if self.path != "/api/v1/chat/completions":
                payload = b'{"error": "not found"}'
                code = 404
            elif state.status != 200:
                payload, code = b'{"error": {"message": "rate limited"}}', state.status
            else:
                doc = {"choices": [{"message": {"role": "assistant", "content": state.answer}}]}
                payload, code = json.dumps(doc).encode(), 200
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/api/v1", state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
