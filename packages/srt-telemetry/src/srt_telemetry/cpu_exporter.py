"""CPU power leg B: the per-node Prometheus exporter (`srt-telemetry cpu-power exporter`, 9405).

`GET|HEAD /metrics` -> 200 with the cached exposition text (refreshed by a background thread every
`refresh_interval_seconds`); `GET|HEAD /health` -> 200 `ok` without touching sensors; any other
GET/HEAD path -> 404 `Not Found`; any other method -> 405 with `Allow: GET, HEAD`. Query strings
are ignored; every response closes the connection; request headers must arrive within 5 s; at
most `max_connections` (64) connections are served at once, further ones are closed at accept.
Source order for `auto`: DCGM first, then ACPI (recipe schema, Q1); the in-job collector
(`cpu-power collect`) uses ACPI first.
"""

from __future__ import annotations

import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from srt_telemetry.config import ExporterConfig
from srt_telemetry.cpu_sources import AcpiReader, ChannelReading, open_source
from srt_telemetry.errors import ExporterError

__all__ = ["CONTENT_TYPE", "CpuPowerExporter", "render_metrics"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
EXPORTER_SOURCE_ORDER = ("dcgm", "acpi")
log = logging.getLogger("srt_telemetry.exporter")


def _esc(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def render_metrics(readings: list[ChannelReading]) -> str:
    """The ACPI family exposition body (pure)."""
    lines = [
        "# HELP cpu_power_acpi_watts Grace CPU power rail reading from ACPI hwmon (W).",
        "# TYPE cpu_power_acpi_watts gauge",
    ]
    for r in readings:
        lines.append(
            f'cpu_power_acpi_watts{{sensor="{_esc(r.sensor)}",type="{r.kind}",'
            f'socket="{_esc(r.socket)}",oem_info="{_esc(r.label)}",source="acpi"}} {r.watts:.6f}'
        )
    return "\n".join(lines) + "\n"


class _BoundedServer(ThreadingHTTPServer):
    """At most `limit` connections are served at once; further ones are closed at accept."""

    daemon_threads = True

    def __init__(
        self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], limit: int
    ) -> None:
        self._slots = threading.BoundedSemaphore(limit)
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


class CpuPowerExporter:
    """The HTTP server plus its refresh thread. `serve_forever` until `shutdown`."""

    def __init__(self, config: ExporterConfig) -> None:
        self.config = config
        self.reader: AcpiReader = open_source(
            config.source, Path(config.hwmon_root), order=EXPORTER_SOURCE_ORDER
        )
        self._body = render_metrics(self.reader.read()).encode()
        self._stop = threading.Event()
        exporter = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = 5.0

            def _send(self, code: int, body: bytes, ctype: str, extra: dict[str, str]) -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Connection", "close")
                for k, v in extra.items():
                    self.send_header(k, v)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)
                self.close_connection = True

            def _get(self) -> None:
                path = self.path.split("?", 1)[0]
                if path == "/metrics":
                    self._send(200, exporter._body, CONTENT_TYPE, {})
                elif path == "/health":
                    self._send(200, b"ok\n", "text/plain; charset=utf-8", {})
                else:
                    self._send(404, b"Not Found\n", "text/plain; charset=utf-8", {})

            def do_GET(self) -> None:
                self._get()

            def do_HEAD(self) -> None:
                self._get()

            def _not_allowed(self) -> None:
                self._send(
                    405,
                    b"Method Not Allowed\n",
                    "text/plain; charset=utf-8",
                    {"Allow": "GET, HEAD"},
                )

            # http.server dispatches on do_<METHOD>; every method but GET/HEAD is 405
            do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _not_allowed  # noqa: N815

            def log_message(self, format: str, *args: object) -> None:
                log.debug("%s " + format, self.address_string(), *args)

        try:
            self.httpd = _BoundedServer((config.bind, config.port), Handler, config.max_connections)
        except OSError as exc:
            raise ExporterError(
                f"cannot listen on {config.bind}:{config.port}: {exc.strerror}; "
                "pick a free port (telemetry.cpu_power_exporter.port)"
            ) from exc
        self.port = int(self.httpd.server_address[1])
        self._refresher = threading.Thread(target=self._refresh, name="cpu-refresh", daemon=True)

    def _refresh(self) -> None:
        while not self._stop.wait(self.config.refresh_interval_seconds):
            self._body = render_metrics(self.reader.read()).encode()

    def serve_forever(self) -> None:
        self._refresher.start()
        log.info("listening on %s:%d (source %s)", self.config.bind, self.port, self.reader.source)
        self.httpd.serve_forever(poll_interval=0.2)

    def shutdown(self) -> None:
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
