"""Cross-origin reads (pure): which response headers let a browser page read the collector.

Only GET and HEAD are shared, and only with the origins given by ``--cors-origin`` (``*`` means
any). A preflight (OPTIONS) for another method or origin is answered 403 without CORS headers,
so the browser does not send the request; writes never get CORS headers.
"""

from __future__ import annotations

import re
from typing import Final

from srt_cli.collector.errors import ApiError, CollectorConfigError

__all__ = ["ANY_ORIGIN", "SHARED_METHODS", "check_origins", "cors_headers", "preflight_headers"]

ANY_ORIGIN: Final = "*"
SHARED_METHODS: Final = ("GET", "HEAD")
_MAX_AGE: Final = "600"
_ORIGIN = re.compile(r"https?://[^/\s?#]+")


def check_origins(origins: tuple[str, ...]) -> tuple[str, ...]:
    """``origins`` without trailing ``/``; :class:`CollectorConfigError` for one that is not
    ``*`` or ``scheme://host[:port]`` (what a browser sends as ``Origin``)."""
    checked = []
    for raw in origins:
        origin = raw.rstrip("/") if raw != ANY_ORIGIN else raw
        if origin != ANY_ORIGIN and not _ORIGIN.fullmatch(origin):
            raise CollectorConfigError(
                f"--cors-origin {raw!r} is not an origin; give scheme://host[:port] "
                "(e.g. http://localhost:3000), or * for any"
            )
        checked.append(origin)
    return tuple(checked)


def _allowed(origins: tuple[str, ...], origin: str) -> str | None:
    """The ``Access-Control-Allow-Origin`` value for ``origin``, or None."""
    if ANY_ORIGIN in origins:
        return ANY_ORIGIN
    return origin if origin in origins else None


def cors_headers(origins: tuple[str, ...], method: str, origin: str | None) -> dict[str, str]:
    """Headers to add to a response to ``method`` from a page at ``origin``."""
    if origin is None or not origins or method not in SHARED_METHODS:
        return {}
    allow = _allowed(origins, origin)
    if allow is None:
        return {"Vary": "Origin"}
    headers = {"Access-Control-Allow-Origin": allow}
    if allow != ANY_ORIGIN:
        headers["Vary"] = "Origin"
    return headers


def preflight_headers(
    origins: tuple[str, ...], origin: str | None, requested_method: str | None
) -> dict[str, str]:
    """The answer to ``OPTIONS``: headers for a 204, or :class:`ApiError` 403 for a refusal."""
    allow_line = {"Allow": "GET, HEAD, POST, PUT, DELETE, OPTIONS"}
    if origin is None or requested_method is None:
        return allow_line  # not a CORS preflight: say what the collector serves
    allow = _allowed(origins, origin)
    if allow is None:
        raise ApiError(
            403,
            f"CORS: origin {origin!r} is not allowed; start the collector with "
            f"--cors-origin {origin}",
        )
    if requested_method.upper() not in SHARED_METHODS:
        raise ApiError(
            403,
            f"CORS: only GET and HEAD are shared with other origins, not {requested_method}",
        )
    headers = {
        **allow_line,
        "Access-Control-Allow-Origin": allow,
        "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
        "Access-Control-Allow-Headers": "Authorization",
        "Access-Control-Max-Age": _MAX_AGE,
    }
    if allow != ANY_ORIGIN:
        headers["Vary"] = "Origin"
    return headers
