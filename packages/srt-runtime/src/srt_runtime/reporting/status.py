"""Job lifecycle events to the status collectors (docs/telemetry-and-bench.md#status-api).

A :class:`StatusReporter` owns one background thread and a bounded queue: :meth:`send` never
blocks and never raises, so a collector that is down, slow or misconfigured cannot delay or fail
the job. Every event goes to every endpoint (``PUT {endpoint}/api/jobs/{job_id}``, bearer token,
5 s timeout, two attempts on network errors, redirects never followed, 200 = delivered). Each kind
of failure is logged once per endpoint, with its cause; :meth:`close` waits a bounded time and
returns what was delivered.

The final event carries the job's :class:`~srt_runtime.reporting.job_report.JobReport`
(``report``: results, verdicts, diagnosis, uploaded files). A collector that refuses the event
with 422 (one older than ``report``) is sent it again without the report, so it still learns how
the job ended; that is logged once per endpoint.

The submit-side record (``POST {endpoint}/api/jobs``, 201 = created) is :func:`send_job_create`.
"""

from __future__ import annotations

import contextlib
import logging
import math
import queue
import threading
import time
from collections.abc import Mapping
from typing import Any, Literal

import httpx
import msgspec

from srt_runtime.reporting._common import (
    LogFn,
    OnceLog,
    bearer_headers,
    endpoint_problem,
    merge_endpoints,
    null_log,
    token_from,
    usable_endpoints,
)
from srt_runtime.reporting.errors import ReportingConfigError
from srt_runtime.reporting.job_report import JobReport
from srt_schema.recipe import ReportingStatusConfig

__all__ = [
    "DeliverySummary",
    "JobCreate",
    "JobStage",
    "JobStatus",
    "JobUpdate",
    "StatusReporter",
    "announce_job",
    "check_status_config",
    "send_job_create",
]

JobStatus = Literal[
    "submitted", "starting", "workers", "frontend", "benchmark", "completed", "failed", "timeout"
]
JobStage = Literal[
    "starting", "head_infrastructure", "preflight", "workers", "frontend", "benchmark", "cleanup"
]

#: Seconds per request (connect, read, write, pool) and attempts per endpoint
#: (docs/telemetry-and-bench.md#status-api).
DEFAULT_TIMEOUT = 5.0
DEFAULT_ATTEMPTS = 2
DEFAULT_QUEUE_SIZE = 1000


class JobUpdate(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The body of ``PUT /api/jobs/{job_id}``; unset fields are left out."""

    status: JobStatus
    updated_at: str
    stage: JobStage | None = None
    message: str | None = None
    started_at: str | None = None
    completed_at: str | None = None
    exit_code: int | None = None
    logs_url: str | None = None
    metadata: dict[str, Any] | None = None
    #: Only on the final event (``completed`` / ``failed``): what the job produced and, when it
    #: failed, why (docs/telemetry-and-bench.md#status-api, "The job report").
    report: JobReport | None = None


class JobCreate(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The body of ``POST /api/jobs`` (sent once, at submit)."""

    job_id: str
    job_name: str
    submitted_at: str
    cluster: str | None = None
    recipe: str | None = None
    metadata: dict[str, Any] | None = None


class DeliverySummary(msgspec.Struct, frozen=True, kw_only=True):
    """What a reporter did: events accepted, per-endpoint deliveries and losses."""

    events: int
    delivered: dict[str, int]
    lost: dict[str, int]
    #: Events still queued when :meth:`StatusReporter.close` gave up waiting, or refused because
    #: the queue was full.
    dropped: int


def _with_cluster(update: JobUpdate, cluster: str | None) -> JobUpdate:
    if cluster is None:
        return update
    metadata = dict(update.metadata or {})
    metadata["cluster"] = cluster
    return msgspec.structs.replace(update, metadata=metadata)


def _without_report(update: JobUpdate) -> JobUpdate:
    return msgspec.structs.replace(update, report=None)


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class StatusReporter:
    """Sends :class:`JobUpdate` events to every configured collector from a background thread."""

    def __init__(
        self,
        endpoints: tuple[str, ...],
        job_id: str,
        *,
        token: str | None,
        token_env: str = "SRTCTL_STATUS_TOKEN",
        cluster: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        attempts: int = DEFAULT_ATTEMPTS,
        queue_size: int = DEFAULT_QUEUE_SIZE,
        log: LogFn = null_log,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.endpoints = merge_endpoints(None, endpoints)
        self.job_id = job_id
        self._token = token
        self._token_env = token_env
        self._cluster = cluster
        self._attempts = max(1, attempts)
        self._log = log
        self._once = OnceLog(log)
        self._queue: queue.Queue[JobUpdate | None] = queue.Queue(maxsize=queue_size)
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout),
            follow_redirects=False,
            transport=transport,
        )
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._events = 0
        self._dropped = 0
        self._delivered = dict.fromkeys(self.endpoints, 0)
        self._lost = dict.fromkeys(self.endpoints, 0)

    @classmethod
    def from_config(
        cls,
        config: ReportingStatusConfig | None,
        job_id: str,
        environ: Mapping[str, str],
        *,
        cluster: str | None = None,
        log: LogFn = null_log,
        timeout: float = DEFAULT_TIMEOUT,
        transport: httpx.BaseTransport | None = None,
    ) -> StatusReporter:
        """A reporter for ``reporting.status`` (disabled when it names no endpoint).

        The token is read here, from the variable ``config.token_env`` names; it is kept in
        memory only and never logged or written.
        """
        if config is None:
            return cls((), job_id, token=None, log=log, transport=transport)
        token_env = config.token_env or "SRTCTL_STATUS_TOKEN"
        return cls(
            usable_endpoints(merge_endpoints(config.endpoint, config.endpoints), log),
            job_id,
            token=token_from(environ, token_env),
            token_env=token_env,
            cluster=cluster,
            timeout=timeout,
            log=log,
            transport=transport,
        )

    @property
    def enabled(self) -> bool:
        return bool(self.endpoints)

    def send(self, update: JobUpdate) -> bool:
        """Queue ``update`` for every endpoint; never blocks. False if disabled, closed or full."""
        if not self.endpoints:
            return False
        with self._lock:
            if self._closed:
                return False
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name=f"srt-status-{self.job_id}", daemon=True
                )
                self._thread.start()
            try:
                self._queue.put_nowait(_with_cluster(update, self._cluster))
            except queue.Full:
                self._dropped += 1
                self._once(
                    "queue-full",
                    logging.WARNING,
                    f"status reporter: queue of {self._queue.maxsize} events is full (the "
                    "collectors are not keeping up); further events are dropped until it drains",
                )
                return False
            self._events += 1
        return True

    def close(self, timeout: float) -> DeliverySummary:
        """Stop accepting events, wait up to ``timeout`` s for the queue to drain, summarise.

        The sender thread is a daemon: if a collector is still hanging when the time is up, the
        remaining events are counted as dropped and the job goes on.
        """
        deadline = time.monotonic() + max(timeout, 0.0)
        with self._lock:
            self._closed = True
            thread = self._thread
        if thread is not None:
            with contextlib.suppress(queue.Full):
                self._queue.put(None, timeout=max(deadline - time.monotonic(), 0.0))
            thread.join(max(deadline - time.monotonic(), 0.0))
            if thread.is_alive():
                left = self._queue.qsize()
                self._log(
                    logging.WARNING,
                    f"status reporter: gave up waiting after {timeout:g}s; {left} queued "
                    "event(s) not delivered (local status_events.jsonl has them)",
                )
                with self._lock:
                    self._dropped += max(left - 1, 0)  # the close marker is not an event
            else:
                self._client.close()
        else:
            self._client.close()
        with self._lock:
            return DeliverySummary(
                events=self._events,
                delivered=dict(self._delivered),
                lost=dict(self._lost),
                dropped=self._dropped,
            )

    def _run(self) -> None:
        while True:
            update = self._queue.get()
            if update is None:
                return
            body = msgspec.json.encode(update)
            for endpoint in self.endpoints:
                ok = self._put(endpoint, body)
                if ok is None and update.report is not None:
                    self._once(
                        f"report {endpoint}",
                        logging.WARNING,
                        f"status collector {endpoint} refused the job report (HTTP 422: a "
                        "collector older than the report?); the final status is sent without it",
                    )
                    ok = self._put(endpoint, msgspec.json.encode(_without_report(update)))
                with self._lock:
                    if ok:
                        self._delivered[endpoint] += 1
                    else:
                        self._lost[endpoint] += 1

    def _put(self, endpoint: str, body: bytes) -> bool | None:
        """Delivered (True), lost (False), or refused as invalid (None: HTTP 422)."""
        url = f"{endpoint}/api/jobs/{self.job_id}"
        headers = {"Content-Type": "application/json", **bearer_headers(self._token)}
        last: Exception | None = None
        for _ in range(self._attempts):
            try:
                response = self._client.put(url, content=body, headers=headers)
            except (httpx.HTTPError, httpx.InvalidURL) as exc:
                last = exc
                continue
            judged = self._judge(endpoint, response)
            return None if response.status_code == 422 else judged
        assert last is not None
        self._once(
            f"network {endpoint}",
            logging.WARNING,
            f"status update to {url} lost after {self._attempts} attempts: {_describe(last)} "
            "(reported once per endpoint; the job is not affected)",
        )
        return False

    def _judge(self, endpoint: str, response: httpx.Response) -> bool:
        code = response.status_code
        if code == 200:
            return True
        url = str(response.request.url)
        if 300 <= code < 400:
            self._once(
                f"redirect {endpoint}",
                logging.WARNING,
                f"status update to {url} got HTTP {code} (a redirect, not followed): the collector "
                "is behind a login page or proxy; point reporting.status at the collector itself",
            )
        elif code in (401, 403):
            self._once(
                f"auth {endpoint}",
                logging.WARNING,
                f"status update to {url} got HTTP {code}: check the bearer token in "
                f"${self._token_env}",
            )
        else:
            self._once(
                f"http {code} {endpoint}",
                logging.DEBUG,
                f"status update to {url} got HTTP {code}",
            )
        return False


def check_status_config(config: ReportingStatusConfig) -> tuple[str, ...]:
    """The merged endpoints, or :class:`ReportingConfigError` naming the first bad field (pure;
    for ``validate`` / ``dry-run``: at run time a bad endpoint is only skipped with a warning)."""
    endpoints = merge_endpoints(config.endpoint, config.endpoints)
    for url in endpoints:
        problem = endpoint_problem(url)
        if problem is not None:
            raise ReportingConfigError(
                f"$.reporting.status: endpoint {url!r} {problem}; give the collector's base URL, "
                "e.g. http://collector.example:8080"
            )
    if config.token_env is not None and not config.token_env.isidentifier():
        raise ReportingConfigError(
            "$.reporting.status.token_env: the value is not an environment variable name (not "
            "shown: it may be the token itself); name the variable that holds the token, e.g. "
            "SRTCTL_STATUS_TOKEN"
        )
    interval = config.logging_stream_interval
    if interval is not None and not (math.isfinite(interval) and interval > 0):
        raise ReportingConfigError(
            f"$.reporting.status.logging-stream-interval: {interval!r} must be a finite number of "
            "seconds > 0; omit it to disable streaming"
        )
    return endpoints


def send_job_create(
    endpoints: tuple[str, ...],
    payload: JobCreate,
    *,
    token: str | None,
    timeout: float = DEFAULT_TIMEOUT,
    attempts: int = DEFAULT_ATTEMPTS,
    log: LogFn = null_log,
    transport: httpx.BaseTransport | None = None,
) -> bool:
    """POST the submit record to every endpoint (201 = created); True if any accepted it.

    Synchronous (the submit side has nothing else to do), bounded by ``attempts x timeout`` per
    endpoint; failures are logged as warnings and never raised.
    """
    body = msgspec.json.encode(payload)
    headers = {"Content-Type": "application/json", **bearer_headers(token)}
    accepted = False
    with httpx.Client(
        timeout=httpx.Timeout(timeout), follow_redirects=False, transport=transport
    ) as client:
        for endpoint in merge_endpoints(None, endpoints):
            url = f"{endpoint}/api/jobs"
            for attempt in range(1, max(1, attempts) + 1):
                try:
                    response = client.post(url, content=body, headers=headers)
                except (httpx.HTTPError, httpx.InvalidURL) as exc:
                    if attempt == attempts:
                        log(
                            logging.WARNING,
                            f"job record POST to {url} failed after {attempts} attempts: "
                            f"{_describe(exc)}; the run will still appear when it starts",
                        )
                    continue
                if response.status_code == 201:
                    accepted = True
                else:
                    log(
                        logging.WARNING,
                        f"job record POST to {url} got HTTP {response.status_code} (expected "
                        "201); the run will still appear when it starts",
                    )
                break
    return accepted


def announce_job(
    config: ReportingStatusConfig | None,
    payload: JobCreate,
    environ: Mapping[str, str],
    *,
    log: LogFn = null_log,
    timeout: float = DEFAULT_TIMEOUT,
    transport: httpx.BaseTransport | None = None,
) -> bool | None:
    """The submit-side record for ``reporting.status``: :func:`send_job_create` to every usable
    endpoint with the token from the variable ``token_env`` names. None when no endpoint is
    configured (nothing sent); else whether any endpoint accepted it."""
    if config is None:
        return None
    endpoints = usable_endpoints(merge_endpoints(config.endpoint, config.endpoints), log)
    if not endpoints:
        return None
    return send_job_create(
        endpoints,
        payload,
        token=token_from(environ, config.token_env),
        timeout=timeout,
        log=log,
        transport=transport,
    )
