"""Small pieces shared by the reporting modules: the log callable, the bearer header, URLs."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

__all__ = [
    "DEFAULT_TOKEN_ENV",
    "LogFn",
    "OnceLog",
    "bearer_headers",
    "endpoint_problem",
    "merge_endpoints",
    "null_log",
    "run_bounded",
    "token_from",
    "usable_endpoints",
]

#: ``(level, message)``; ``logging.Logger.log`` fits. Reporting never prints.
LogFn = Callable[[int, str], None]

DEFAULT_TOKEN_ENV = "SRTCTL_STATUS_TOKEN"

T = TypeVar("T")


def null_log(level: int, message: str) -> None:
    """A :data:`LogFn` that drops everything."""


def merge_endpoints(endpoint: str | None, endpoints: Iterable[str] | None) -> tuple[str, ...]:
    """``endpoint`` then ``endpoints``; trailing ``/`` stripped, blanks and repeats dropped."""
    merged: list[str] = []
    for raw in (endpoint, *(endpoints or ())):
        if raw is None:
            continue
        url = raw.strip().rstrip("/")
        if url and url not in merged:
            merged.append(url)
    return tuple(merged)


def endpoint_problem(url: str) -> str | None:
    """Why ``url`` cannot be a collector base URL, or None when it can."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in ("http", "https"):
        return "is not an http:// or https:// URL"
    host = rest.split("/", 1)[0].rsplit("@", 1)[-1]
    if not host or host.startswith(":") or any(c.isspace() for c in url):
        return "has no host name (or contains spaces)"
    return None


def usable_endpoints(endpoints: tuple[str, ...], log: LogFn) -> tuple[str, ...]:
    """``endpoints`` without the malformed ones, each of which is logged as a warning."""
    usable = []
    for url in endpoints:
        problem = endpoint_problem(url)
        if problem is None:
            usable.append(url)
        else:
            log(logging.WARNING, f"reporting.status endpoint {url!r} {problem}; it is ignored")
    return tuple(usable)


def bearer_headers(token: str | None) -> dict[str, str]:
    """``Authorization: Bearer <token>``, or nothing when the token is unset or empty."""
    return {"Authorization": f"Bearer {token}"} if token else {}


def token_from(environ: Mapping[str, str], token_env: str | None) -> str | None:
    """The bearer token held by the variable named ``token_env`` (default SRTCTL_STATUS_TOKEN)."""
    value = environ.get(token_env or DEFAULT_TOKEN_ENV, "")
    return value or None


class OnceLog:
    """Logs each distinct key once (a collector that is down is reported once, not per event)."""

    def __init__(self, log: LogFn) -> None:
        self._log = log
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, key: str, level: int, message: str) -> None:
        with self._lock:
            if key in self._seen:
                return
            self._seen.add(key)
        self._log(level, message)


def run_bounded(
    target: Callable[[], T], timeout: float, *, name: str
) -> tuple[bool, T | None, BaseException | None]:
    """Run ``target`` on a daemon thread and wait at most ``timeout`` seconds.

    Returns ``(finished, value, error)``. When the time is up the thread is abandoned (it is a
    daemon, so it cannot keep the process alive): this is the hard bound behind every network
    step whose library has no overall deadline of its own.
    """
    box: list[T] = []
    errors: list[BaseException] = []

    def _run() -> None:
        try:
            box.append(target())
        except BaseException as exc:  # handed to the caller, which reports it
            errors.append(exc)

    thread = threading.Thread(target=_run, name=name, daemon=True)
    thread.start()
    thread.join(max(timeout, 0.0))
    if thread.is_alive():
        return False, None, None
    return True, (box[0] if box else None), (errors[0] if errors else None)
