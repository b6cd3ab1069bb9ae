"""Who may do what (pure): bearer tokens per request, and whether a configuration may start.

docs/telemetry-and-bench.md#status-api. With a write token every route but ``/api/health`` and the
UI page (``/``, ``/jobs/{id}``) needs ``Authorization: Bearer <token>``: the write token for
anything, the read token (if one is set) for GET and HEAD only; a missing or unknown token is
401 with ``WWW-Authenticate: Bearer``, the read token on a write route is 403. Tokens are
compared in constant time. Without a write token nothing is checked, which is allowed only on a
loopback address or with ``--allow-unauthenticated``; a read token without a write token is
refused at start-up.
"""

from __future__ import annotations

import hmac
import ipaddress
from dataclasses import dataclass
from typing import Final

from srt_cli.collector.errors import ApiError, CollectorConfigError

__all__ = [
    "PUBLIC_PATHS",
    "READ_METHODS",
    "Tokens",
    "check_request",
    "check_startup",
    "is_loopback",
    "needs_auth",
]

READ_METHODS: Final = ("GET", "HEAD")
#: Paths anyone may GET or HEAD: the health probe and the (static) UI page, which is also served
#: at ``/jobs/<id>`` (it holds no data: its script reads the API with the reader's token).
PUBLIC_PATHS: Final = ("/", "/api/health")
_PAGE_PREFIX: Final = "/jobs/"
_CHALLENGE: Final = {"WWW-Authenticate": "Bearer"}


@dataclass(frozen=True, kw_only=True)
class Tokens:
    """The tokens in effect, and the names of the variables they came from (for messages)."""

    write: str | None
    read: str | None
    write_env: str = "SRTCTL_STATUS_TOKEN"
    read_env: str = "SRTCTL_STATUS_READ_TOKEN"


def needs_auth(method: str, path: str) -> bool:
    """False only for a read of a public path (and CORS preflights, which carry no token)."""
    if method == "OPTIONS":
        return False
    page = path.startswith(_PAGE_PREFIX) and "/" not in path[len(_PAGE_PREFIX) :]
    return not (method in READ_METHODS and (path in PUBLIC_PATHS or page))


def _bearer(header: str | None) -> str | None:
    if header is None:
        return None
    scheme, _, value = header.strip().partition(" ")
    value = value.strip()
    return value if scheme.lower() == "bearer" and value else None


def _same(presented: bytes, expected: str) -> bool:
    return hmac.compare_digest(presented, expected.encode())


def check_request(tokens: Tokens, method: str, authorization: str | None) -> None:
    """Raise :class:`ApiError` (401 or 403) unless ``authorization`` allows ``method``."""
    if tokens.write is None:
        return
    token = _bearer(authorization)
    if token is None:
        raise ApiError(
            401, "this collector needs Authorization: Bearer <token>", headers=_CHALLENGE
        )
    presented = token.encode()
    # Both comparisons always run, so the time taken does not say which token was close.
    is_write = _same(presented, tokens.write)
    is_read = tokens.read is not None and _same(presented, tokens.read)
    if is_write:
        return
    if is_read:
        if method in READ_METHODS:
            return
        raise ApiError(403, f"the read token may only GET and HEAD; {method} needs the write token")
    raise ApiError(401, "the bearer token is not valid for this collector", headers=_CHALLENGE)


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback IP address (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _check_env_name(flag: str, name: str) -> None:
    if not name.isidentifier():
        raise CollectorConfigError(
            f"{flag} {name!r} is not an environment variable name; name the variable that holds "
            f"the token, e.g. {flag} SRTCTL_STATUS_TOKEN"
        )


def check_startup(tokens: Tokens, host: str, *, allow_unauthenticated: bool) -> None:
    """Raise :class:`CollectorConfigError` for a configuration that must not start."""
    _check_env_name("--token-env", tokens.write_env)
    _check_env_name("--read-token-env", tokens.read_env)
    if tokens.write is None and tokens.read is not None:
        raise CollectorConfigError(
            f"${tokens.read_env} is set but ${tokens.write_env} is not: a read token needs a "
            f"write token; set {tokens.write_env} (or name its variable with --token-env), or "
            f"unset {tokens.read_env}"
        )
    if tokens.write is not None and tokens.write == tokens.read:
        raise CollectorConfigError(
            f"${tokens.read_env} and ${tokens.write_env} hold the same token; give the read "
            "token a value of its own"
        )
    if tokens.write is None and not allow_unauthenticated and not is_loopback(host):
        raise CollectorConfigError(
            f"--host {host} is not a loopback address and ${tokens.write_env} is not set: "
            f"anyone who reaches the port could write jobs; set {tokens.write_env} (or name "
            "its variable with --token-env), or pass --allow-unauthenticated"
        )
