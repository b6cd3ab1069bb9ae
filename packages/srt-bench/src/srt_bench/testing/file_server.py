"""A static HTTP file server on 127.0.0.1 (stdlib `http.server`), standing in for the hosts a job
downloads from: the published Mooncake traces, a cluster's mirror. It serves a folder as it is
(a missing file is a 404) and records every path requested, so a test can tell a download from a
cache hit. Used by the fetch tests, the local job tests and the corpus-run tier.
"""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path
from typing import Any

__all__ = ["StaticFileServer"]


class _Handler(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *args: Any, requested: list[str], **kwargs: Any) -> None:
        self._requested = requested
        super().__init__(*args, **kwargs)

    def do_GET(self) -> None:
        self._requested.append(self.path)
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the paths are in `requested`


class StaticFileServer:
    """`with StaticFileServer(folder) as server:` serves `folder` at `server.url` until the block
    ends; `server.requested` lists the paths asked for, in order."""

    def __init__(self, root: Path) -> None:
        self.requested: list[str] = []
        handler = functools.partial(_Handler, directory=str(root), requested=self.requested)
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> StaticFileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
