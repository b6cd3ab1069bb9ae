"""The collector's exceptions (the command maps them to exit codes and prints them).

:class:`ApiError` is an HTTP answer other than success, raised by validation and routing and
turned into a JSON ``{"detail": ...}`` reply by the server; it never leaves the server.
"""

from __future__ import annotations

__all__ = [
    "ApiError",
    "CollectorConfigError",
    "CollectorError",
    "CollectorStartError",
]


class CollectorError(Exception):
    """Base of the collector's start-up errors."""


class CollectorConfigError(CollectorError):
    """The flags or the token variables do not make a safe collector (a usage error)."""


class CollectorStartError(CollectorError):
    """The environment does not let the collector start: the port is taken, the db unusable."""


class ApiError(Exception):
    """A request the collector answers with ``status`` and ``{"detail": detail}``."""

    def __init__(self, status: int, detail: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.headers = dict(headers or {})
