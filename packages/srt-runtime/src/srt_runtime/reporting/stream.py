"""Live log and capture streaming to the status collectors
(docs/telemetry-and-bench.md#log-streaming).

Every ``interval`` seconds a daemon thread flushes: for each endpoint, each log file under the
log directory (suffix ``.out .err .log .csv .jsonl``, sorted) is sent from the byte offset that
endpoint acknowledged up to the size seen at the start of the flush, in chunks of at most 1 MiB::

    POST {endpoint}/api/jobs/{job_id}/logs?file=<rel>&offset=<n>[&final=1][&cluster=<c>]
    Content-Type: application/octet-stream; body = the raw bytes

An offset advances only on a 200 JSON ack naming our ``job_id`` with ``stored`` 0 or 1; a
refused chunk is kept verbatim and resent on the next flush, and the endpoint is skipped for the
rest of that flush. Sealed Tachometer segments (``out-N.parquet`` in the outbox, by N) go to
``…/captures?file=&offset=&total=`` (ack: ``next_offset == offset+len``, ``complete ==
(next_offset == total)``) and are deleted once every endpoint has them complete. :meth:`stop`
does a last flush whose final chunk per file carries ``final=1``, bounded by 5 s in total.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Mapping
from pathlib import Path

import httpx
import msgspec

from srt_runtime.reporting._common import (
    LogFn,
    OnceLog,
    bearer_headers,
    merge_endpoints,
    null_log,
    run_bounded,
    token_from,
    usable_endpoints,
)
from srt_runtime.reporting.errors import ReportingError
from srt_schema.recipe import ReportingStatusConfig

__all__ = ["CHUNK_SIZE", "STOP_BUDGET", "STREAM_SUFFIXES", "LogStreamer", "list_stream_files"]

STREAM_SUFFIXES = (".err", ".jsonl", ".csv", ".log", ".out")
CHUNK_SIZE = 1024 * 1024
#: Seconds :meth:`LogStreamer.stop` may spend on the final flush.
STOP_BUDGET = 5.0
_SEGMENT = re.compile(r"^out-(\d+)\.parquet$")


class _LogAck(msgspec.Struct):
    job_id: str
    stored: int


class _CaptureAck(msgspec.Struct):
    job_id: str
    next_offset: int
    complete: bool


class _RefusedError(ReportingError):
    """A chunk was not acknowledged (network error, HTTP status or a malformed ack)."""


def list_stream_files(log_dir: Path) -> list[tuple[str, int]]:
    """``(relative posix path, size)`` of every streamable file under ``log_dir``, sorted."""
    found = []
    for path in log_dir.rglob("*"):
        if path.suffix not in STREAM_SUFFIXES or path.is_symlink():
            continue
        try:
            if path.is_file():
                found.append((path.relative_to(log_dir).as_posix(), path.stat().st_size))
        except OSError:  # removed between listing and stat: not ours to stream any more
            continue
    return sorted(found)


def _segments(outbox: Path) -> list[Path]:
    if not outbox.is_dir():
        return []
    numbered = [(int(m.group(1)), p) for p in outbox.iterdir() if (m := _SEGMENT.match(p.name))]
    return [p for _, p in sorted(numbered)]


def _read(path: Path, offset: int, size: int) -> bytes:
    with path.open("rb") as handle:
        handle.seek(offset)
        return handle.read(size)


class LogStreamer:
    """Streams the log directory and the Tachometer outbox to every endpoint."""

    def __init__(
        self,
        endpoints: tuple[str, ...],
        job_id: str,
        log_dir: Path,
        *,
        token: str | None,
        interval: float,
        cluster: str | None = None,
        outbox: Path | None = None,
        timeout: float = 5.0,
        chunk_size: int = CHUNK_SIZE,
        log: LogFn = null_log,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.endpoints = merge_endpoints(None, endpoints)
        self.job_id = job_id
        self.log_dir = log_dir
        self.outbox = outbox if outbox is not None else log_dir.parent / "tachometer-outbox"
        self.interval = interval
        self._token = token
        self._cluster = cluster
        self._chunk = chunk_size
        self._log = log
        self._once = OnceLog(log)
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout), follow_redirects=False, transport=transport
        )
        self._acked: dict[tuple[str, str], int] = {}
        self._pending: dict[tuple[str, str], tuple[int, bytes]] = {}
        self._finals: set[tuple[str, str]] = set()
        self._captured: dict[tuple[str, str], int] = {}
        self._flush_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @classmethod
    def from_config(
        cls,
        config: ReportingStatusConfig | None,
        job_id: str,
        log_dir: Path,
        environ: Mapping[str, str],
        *,
        cluster: str | None = None,
        log: LogFn = null_log,
        transport: httpx.BaseTransport | None = None,
    ) -> LogStreamer | None:
        """A streamer when ``reporting.status`` has an endpoint and ``logging-stream-interval``."""
        if config is None or config.logging_stream_interval is None:
            return None
        endpoints = usable_endpoints(merge_endpoints(config.endpoint, config.endpoints), null_log)
        if not endpoints:
            return None
        return cls(
            endpoints,
            job_id,
            log_dir,
            token=token_from(environ, config.token_env),
            interval=config.logging_stream_interval,
            cluster=cluster,
            log=log,
            transport=transport,
        )

    def acknowledged(self, endpoint: str, rel: str) -> int:
        """Bytes of ``rel`` that ``endpoint`` has acknowledged."""
        return self._acked.get((endpoint, rel), 0)

    def start(self) -> None:
        """Start the periodic flush thread (a daemon)."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._loop, name=f"srt-logstream-{self.job_id}", daemon=True
            )
            self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.flush()
            except OSError as exc:  # the log directory itself is unreadable: keep the job going
                self._once(
                    f"local {exc}",
                    logging.WARNING,
                    f"log streaming: cannot read {self.log_dir}: {exc}; retrying every "
                    f"{self.interval:g}s (reported once)",
                )

    def stop(self, budget: float = STOP_BUDGET) -> bool:
        """Stop the thread and send the final chunks (``final=1``) within ``budget`` seconds.

        Returns whether every endpoint took the final flush; if not, the local logs are the record.
        """
        deadline = time.monotonic() + budget
        self._stop.set()
        if self._thread is not None:
            self._thread.join(max(deadline - time.monotonic(), 0.0))
        finished, ok, _ = run_bounded(
            lambda: self.flush(final=True, deadline=deadline),
            max(deadline - time.monotonic(), 0.0),
            name=f"srt-logstream-final-{self.job_id}",
        )
        if not finished:
            self._log(
                logging.WARNING,
                f"log streaming: the final flush did not complete within {budget:g}s; local logs "
                f"are retained in {self.log_dir}",
            )
            return False
        self._client.close()
        return bool(ok)  # a refused endpoint was already reported once by flush()

    def flush(self, *, final: bool = False, deadline: float | None = None) -> bool:
        """One pass over every endpoint; True when every endpoint took everything it was sent."""
        if not self._flush_lock.acquire(timeout=0 if deadline is None else 0.5):
            return False  # another flush is running (a slow collector): skip this tick
        try:
            files = list_stream_files(self.log_dir)
            all_ok = True
            for endpoint in self.endpoints:
                try:
                    self._send_logs(endpoint, files, final, deadline)
                    self._send_segments(endpoint, deadline)
                except _RefusedError as exc:
                    all_ok = False
                    self._once(
                        f"stream {endpoint} {exc}",
                        logging.WARNING,
                        f"log streaming to {endpoint} failed: {exc}; it is retried at the next "
                        "flush (reported once)",
                    )
            self._reap_segments()
            return all_ok
        finally:
            self._flush_lock.release()

    def _params(self, **values: str | int) -> dict[str, str | int]:
        if self._cluster:
            values["cluster"] = self._cluster
        return values

    def _post(
        self, endpoint: str, route: str, params: Mapping[str, str | int], body: bytes
    ) -> bytes:
        url = f"{endpoint}/api/jobs/{self.job_id}/{route}"
        headers = {"Content-Type": "application/octet-stream", **bearer_headers(self._token)}
        try:
            response = self._client.post(url, params=dict(params), content=body, headers=headers)
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise _RefusedError(f"{type(exc).__name__}: {exc}") from exc
        if response.status_code != 200:
            raise _RefusedError(f"HTTP {response.status_code} from {url}")
        return response.content

    def _send_logs(
        self, endpoint: str, files: list[tuple[str, int]], final: bool, deadline: float | None
    ) -> None:
        for rel, size in files:
            key = (endpoint, rel)
            offset = self._acked.get(key, 0)
            sent_final = False
            while offset < size:
                if deadline is not None and time.monotonic() > deadline:
                    raise _RefusedError("out of time")
                pending = self._pending.get(key)
                if pending is not None and pending[0] == offset:
                    chunk = pending[1]
                else:
                    try:
                        chunk = _read(self.log_dir / rel, offset, min(self._chunk, size - offset))
                    except OSError:
                        chunk = b""  # removed since the listing
                    if not chunk:
                        break  # the file shrank or went away under us
                last = final and offset + len(chunk) >= size
                self._pending[key] = (offset, chunk)
                self._post_log(endpoint, rel, offset, chunk, last)
                del self._pending[key]
                offset += len(chunk)
                self._acked[key] = offset
                sent_final = last
            if final and not sent_final and key not in self._finals:
                self._post_log(endpoint, rel, offset, b"", True)
            if final:
                self._finals.add(key)

    def _post_log(self, endpoint: str, rel: str, offset: int, chunk: bytes, last: bool) -> None:
        params = self._params(file=rel, offset=offset, **({"final": 1} if last else {}))
        body = self._post(endpoint, "logs", params, chunk)
        try:
            ack = msgspec.json.decode(body, type=_LogAck)
        except msgspec.DecodeError as exc:
            raise _RefusedError(f"malformed log ack for {rel}: {exc}") from exc
        if ack.job_id != self.job_id or ack.stored not in (0, 1):
            raise _RefusedError(f"log ack for {rel} names job {ack.job_id!r}, stored={ack.stored}")

    def _send_segments(self, endpoint: str, deadline: float | None) -> None:
        for path in _segments(self.outbox):
            key = (endpoint, path.name)
            try:
                total = path.stat().st_size
            except FileNotFoundError:
                continue
            offset = self._captured.get(key, 0)
            if offset >= total and offset > 0:
                continue
            while True:
                if deadline is not None and time.monotonic() > deadline:
                    raise _RefusedError("out of time")
                try:
                    chunk = _read(path, offset, min(self._chunk, total - offset))
                except OSError:
                    break  # removed since the listing
                if len(chunk) < min(self._chunk, total - offset):
                    break  # shrank mid-upload: abandoned for this flush
                params = self._params(file=path.name, offset=offset, total=total)
                body = self._post(endpoint, "captures", params, chunk)
                try:
                    ack = msgspec.json.decode(body, type=_CaptureAck)
                except msgspec.DecodeError as exc:
                    raise _RefusedError(f"malformed capture ack for {path.name}: {exc}") from exc
                nxt = offset + len(chunk)
                if (
                    ack.job_id != self.job_id
                    or ack.next_offset != nxt
                    or ack.complete != (nxt == total)
                ):
                    raise _RefusedError(
                        f"capture ack for {path.name} at offset {offset}: next_offset="
                        f"{ack.next_offset}, complete={ack.complete} (expected {nxt}, "
                        f"{nxt == total})"
                    )
                offset = nxt
                self._captured[key] = offset
                if offset >= total:
                    break

    def _reap_segments(self) -> None:
        for path in _segments(self.outbox):
            try:
                total = path.stat().st_size
            except FileNotFoundError:
                continue
            done = all(self._captured.get((ep, path.name), -1) >= total for ep in self.endpoints)
            if done:
                path.unlink(missing_ok=True)
                for ep in self.endpoints:
                    self._captured.pop((ep, path.name), None)
