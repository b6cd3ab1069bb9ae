"""The replaying DCGM exporter (`python -m srt_telemetry.testing replay-dcgm`).

A stdlib threaded HTTP/1.1 server (keep-alive, like dcgm-exporter's Go server):

- `GET /metrics` -> the capture's body for N GPUs (`capture.build_template`) with every GPU's
  `DCGM_FI_DEV_POWER_USAGE` set to the curve at the moment the request is handled
  (`t = now - start_unix`). With a clock offset (or when the capture carried timestamps) every
  sample carries the timestamp `now + clock_offset_s` in ms; dcgm-exporter itself prints none.
- `GET /health` -> 200 JSON `ReplayInfo` plus `clock_unix` (the shifted clock).
- other paths -> 404.

`die_after_s`: `serve` closes the port that long after it started serving and returns "died",
simulating an exporter that dies mid-window. `die()` (from another thread: the CLI's SIGUSR1)
does the same at once, so a test kills it when its window has begun, not on a timer that a slow
start-up can outrun. Connections still open are cut, not answered.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Literal

import msgspec

from srt_telemetry.errors import ExporterError
from srt_telemetry.testing.capture import DcgmTemplate
from srt_telemetry.testing.curve import Curve

__all__ = ["CONTENT_TYPE", "DcgmReplayServer", "ReplayInfo"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
log = logging.getLogger("srt_telemetry.testing.replay")


class ReplayInfo(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What the exporter serves; printed as one JSON line on start-up (and on `/health`)."""

    host: str
    port: int
    url: str
    start_unix: float
    curve: str
    gpu_offset_w: float
    gpus: int
    uuids: tuple[str, ...]
    clock_offset_s: float | None
    die_after_s: float | None


class DcgmReplayServer:
    """Binds on construction (port 0 = any free port); `serve` until `shutdown` or death."""

    def __init__(
        self,
        template: DcgmTemplate,
        curve: Curve,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        gpu_offset_w: float = 0.0,
        start_unix: float | None = None,
        clock_offset_s: float | None = None,
        die_after_s: float | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.template = template
        self.curve = curve
        self.gpu_offset_w = gpu_offset_w
        self.clock = clock
        self.start_unix = clock() if start_unix is None else start_unix
        self.clock_offset_s = clock_offset_s
        self.die_after_s = die_after_s
        self._stamp = clock_offset_s is not None or template.captured_timestamps
        self._dead = threading.Event()
        self._stopped = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = 30.0  # an idle keep-alive connection is closed after this

            def do_GET(self) -> None:
                if outer._dead.is_set():
                    self.close_connection = True
                    return
                path = self.path.split("?", 1)[0]
                if path == "/metrics":
                    body, ctype, code = outer.metrics_body(), CONTENT_TYPE, 200
                elif path == "/health":
                    body, ctype, code = outer.health_body(), "application/json", 200
                else:
                    body, ctype, code = b"Not Found\n", "text/plain; charset=utf-8", 404
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                log.debug("%s " + format, self.address_string(), *args)

        class Server(ThreadingHTTPServer):
            daemon_threads = True

        try:
            self.httpd = Server((host, port), Handler)
        except OSError as exc:
            raise ExporterError(
                f"replay-dcgm: cannot listen on {host}:{port}: {exc.strerror}; pick a free port "
                "(--port 0 picks one)"
            ) from exc
        self.host = host
        self.port = int(self.httpd.server_address[1])

    def powers_w(self, now: float) -> list[float]:
        t = now - self.start_unix
        return [self.curve.power_w(t, k, self.gpu_offset_w) for k in range(self.template.gpus)]

    def metrics_body(self) -> bytes:
        now = self.clock()
        stamp = None
        if self._stamp:
            stamp = round((now + (self.clock_offset_s or 0.0)) * 1000)
        return self.template.render(self.powers_w(now), stamp)

    def info(self) -> ReplayInfo:
        return ReplayInfo(
            host=self.host,
            port=self.port,
            url=f"http://{self.host}:{self.port}/metrics",
            start_unix=self.start_unix,
            curve=self.curve.render(),
            gpu_offset_w=self.gpu_offset_w,
            gpus=self.template.gpus,
            uuids=self.template.uuids,
            clock_offset_s=self.clock_offset_s,
            die_after_s=self.die_after_s,
        )

    def health_body(self) -> bytes:
        clock_unix = self.clock() + (self.clock_offset_s or 0.0)
        data = msgspec.structs.asdict(self.info()) | {"status": "ok", "clock_unix": clock_unix}
        return msgspec.json.encode(data) + b"\n"

    def serve(self) -> Literal["stopped", "died"]:
        """Serve until `shutdown` ("stopped") or until `die_after_s` has passed ("died")."""
        if self.die_after_s is not None:
            threading.Thread(target=self._die_later, name="replay-die", daemon=True).start()
        try:
            self.httpd.serve_forever(poll_interval=0.05)
        finally:
            self.httpd.server_close()
        return "died" if self._dead.is_set() else "stopped"

    def _die_later(self) -> None:
        assert self.die_after_s is not None
        if not self._stopped.wait(self.die_after_s):
            self._dead.set()
            self.httpd.shutdown()

    def shutdown(self) -> None:
        self._stopped.set()
        self.httpd.shutdown()

    def die(self) -> None:
        """Close the port now; `serve` returns "died" (call from another thread than `serve`)."""
        self._dead.set()
        self.httpd.shutdown()
