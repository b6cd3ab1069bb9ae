"""A scripted process for the supervisor's integration tests (started by the LocalLauncher).

Usage: ``python proc.py STEP [ARG...] [STEP ...]``; steps run in order:

- ``trace FILE`` append ``$SRT_FAKE_NAME start`` to FILE (and remember FILE for ``on-term``)
- ``on-term`` on SIGTERM append ``$SRT_FAKE_NAME term`` to the trace file and exit 0
- ``ignore-term`` ignore SIGTERM
- ``say TEXT`` print a line
- ``raw HEX`` write raw bytes (no newline added)
- ``sleep SECONDS`` / ``forever``
- ``exit CODE``
- ``fail-once FILE CODE`` exit CODE if FILE does not exist yet (creating it), else go on
- ``say-once FILE TEXT`` print TEXT if FILE does not exist yet (creating it)
- ``await FILE HEX COUNT`` wait (up to 60 s, else exit 99) until FILE holds the text HEX (hex
  encoded, so a log line showing this command line never matches itself) COUNT times
- ``tcp PORT`` listen on 127.0.0.1:PORT (accepting in the background)
- ``http PORT ROUTES`` serve GET on 127.0.0.1:PORT from the JSON file ROUTES
  ``{"/path": [status, body], ...}``, re-read on each request; a request for a path listed in
  ``"_trace"`` is appended to the trace file once (so tests see *when* the gate saw it)
- ``child`` start a grandchild that sleeps for a long time (in our process group)
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

NAME = os.environ.get("SRT_FAKE_NAME", "proc")
TRACE: list[Path] = []


def _trace(event: str) -> None:
    for path in TRACE:
        with path.open("a") as handle:
            handle.write(f"{NAME} {event}\n")


def _on_term(_signum: int, _frame: object) -> None:
    _trace("term")
    os._exit(0)


def _serve_tcp(port: int) -> None:
    server = socket.create_server(("127.0.0.1", port))

    def _accept() -> None:
        while True:
            conn, _ = server.accept()
            conn.close()

    threading.Thread(target=_accept, daemon=True).start()


def _serve_http(port: int, routes_file: Path) -> None:
    traced: set[str] = set()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            routes = json.loads(routes_file.read_text())
            status, body = routes.get(self.path, [404, {"error": "no route"}])
            if status == 200 and self.path in routes.get("_trace", []) and self.path not in traced:
                traced.add(self.path)
                _trace(f"served {self.path}")
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()


def main(argv: list[str]) -> int:
    i = 0
    while i < len(argv):
        step = argv[i]
        i += 1
        if step == "trace":
            TRACE.append(Path(argv[i]))
            i += 1
            _trace("start")
        elif step == "on-term":
            signal.signal(signal.SIGTERM, _on_term)
        elif step == "ignore-term":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        elif step == "say":
            print(argv[i], flush=True)
            i += 1
        elif step == "raw":
            sys.stdout.buffer.write(bytes.fromhex(argv[i]))
            sys.stdout.buffer.flush()
            i += 1
        elif step == "sleep":
            time.sleep(float(argv[i]))
            i += 1
        elif step == "forever":
            while True:
                time.sleep(3600)
        elif step == "exit":
            return int(argv[i])
        elif step == "fail-once":
            marker, code = Path(argv[i]), int(argv[i + 1])
            i += 2
            if not marker.exists():
                marker.write_text("failed once\n")
                return code
        elif step == "say-once":
            marker, text = Path(argv[i]), argv[i + 1]
            i += 2
            if not marker.exists():
                marker.write_text("said once\n")
                print(text, flush=True)
        elif step == "await":
            path, text = Path(argv[i]), bytes.fromhex(argv[i + 1]).decode()
            count = int(argv[i + 2])
            i += 3
            deadline = time.monotonic() + 60
            while not path.exists() or path.read_text(errors="replace").count(text) < count:
                if time.monotonic() > deadline:
                    print(f"proc.py: {path} never had {count} x {text!r}", flush=True)
                    return 99
                time.sleep(0.01)
        elif step == "tcp":
            _serve_tcp(int(argv[i]))
            i += 1
        elif step == "http":
            _serve_http(int(argv[i]), Path(argv[i + 1]))
            i += 2
        elif step == "child":
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        else:
            print(f"proc.py: unknown step {step!r}", file=sys.stderr)
            return 64
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
