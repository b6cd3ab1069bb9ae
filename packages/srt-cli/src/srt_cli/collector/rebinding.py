"""DNS rebinding (pure): without a write token, only requests addressed to this collector.

A page on a foreign site can make a browser send requests to ``127.0.0.1`` by rebinding its own
name to it; the browser then sends that name as ``Host`` and the site as ``Origin``. A collector
without a write token therefore accepts a request only when its ``Host`` names it (a loopback
name or address, the address it listens on, or an ``--allowed-host``) and its ``Origin``, when
sent, is a loopback page or one ``--cors-origin`` names (``*`` lets any page read, never write).
With a write token the token decides (a rebinding page does not have it). A refusal is 403.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import urlsplit

from srt_cli.collector.auth import READ_METHODS, is_loopback
from srt_cli.collector.cors import ANY_ORIGIN
from srt_cli.collector.errors import ApiError
from srt_cli.collector.protocol import shown

__all__ = ["check_addressed", "host_name"]

_WILDCARDS: Final = ("", "0.0.0.0", "::")


def host_name(host: str) -> str:
    """The name or address of a ``Host`` value (``[::1]:8080`` -> ``::1``), lower case."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host[1:]
    name, _, port = host.rpartition(":")
    return name if name and port.isdigit() else host


def check_addressed(
    *,
    method: str,
    host: str | None,
    origin: str | None,
    bound: str,
    allowed_hosts: tuple[str, ...],
    cors_origins: tuple[str, ...],
) -> None:
    """Raise :class:`ApiError` (403) for a tokenless request not addressed to this collector."""
    if host is not None:
        name = host_name(host)
        known = {h.lower() for h in allowed_hosts}
        if bound.lower() not in _WILDCARDS:
            known.add(bound.lower().strip("[]"))
        if not (is_loopback(name) or name in known):
            raise ApiError(
                403,
                f"Host {shown(host, 80)} is not this collector (without a token a page on another "
                "site could reach it through DNS rebinding): address it as 127.0.0.1 or "
                "localhost, pass --allowed-host with that name, or set a write token",
            )
    if origin is None or (origin == "null" and method in READ_METHODS):
        return
    try:
        origin_host = urlsplit(origin).hostname or ""
    except ValueError:
        origin_host = ""
    if is_loopback(origin_host) or origin.rstrip("/") in cors_origins:
        return
    if ANY_ORIGIN in cors_origins and method in (*READ_METHODS, "OPTIONS"):
        return
    raise ApiError(
        403,
        f"Origin {shown(origin, 80)} may not use this collector without a token: list it with "
        "--cors-origin (reads), or set a write token",
    )
