"""A keep-alive HTTP GET for the scraper's hot path.

The scraper fetches the same URL every interval; stdlib `http.client` on one persistent
connection costs about a third of the CPU of an `httpx.Client.get` per request (measured in
benchmarks/telemetry_throughput.py), which matters at 100 ms over several endpoints. `https://`
URLs go through httpx. Failures raise `FetchError` naming the URL.
"""

from __future__ import annotations

import http.client
from urllib.parse import urlsplit

import httpx

from srt_telemetry.errors import ConfigError

__all__ = ["FetchError", "Getter"]


class FetchError(Exception):
    """A GET failed (connection, timeout, non-200 status); the message names the URL."""


class Getter:
    def __init__(self, url: str, timeout: float) -> None:
        self.url = url
        self.timeout = timeout
        parts = urlsplit(url)
        self._https = parts.scheme == "https"
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(
                f"endpoint url {url!r}: not an http://, https:// or file:// URL; fix the "
                "endpoint in the scrape config"
            )
        self._host = parts.hostname
        self._port = parts.port or (443 if self._https else 80)
        self._path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self._conn: http.client.HTTPConnection | None = None
        self._client: httpx.Client | None = None

    def get(self) -> str:
        if self._https:
            return self._get_httpx()
        reused = self._conn is not None
        try:
            return self._get_once()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            self.close()
            if not reused:
                raise FetchError(f"{self.url}: connection closed by the server") from None
            return self._get_once()  # the server closed an idle keep-alive connection

    def _get_once(self) -> str:
        if self._conn is None:
            self._conn = http.client.HTTPConnection(self._host, self._port, timeout=self.timeout)
        try:
            self._conn.request("GET", self._path, headers={"Accept": "text/plain"})
            resp = self._conn.getresponse()
            body = resp.read()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            raise
        except (OSError, http.client.HTTPException) as exc:  # TimeoutError is an OSError
            self.close()
            raise FetchError(f"{self.url}: {type(exc).__name__}: {exc}") from exc
        if resp.will_close:
            self.close()
        if resp.status != 200:
            raise FetchError(f"{self.url}: HTTP {resp.status} {resp.reason}")
        return body.decode("utf-8", errors="replace")

    def _get_httpx(self) -> str:
        if self._client is None:
            self._client = httpx.Client(timeout=self.timeout, follow_redirects=False)
        try:
            resp = self._client.get(self.url)
            resp.raise_for_status()
        except httpx.HTTPError as exc:
            raise FetchError(f"{self.url}: {type(exc).__name__}: {exc}") from exc
        return resp.text

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._client is not None:
            self._client.close()
            self._client = None
