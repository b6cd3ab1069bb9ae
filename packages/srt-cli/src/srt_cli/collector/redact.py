"""Credentials in URLs (pure): refused in requests, and never shown in the request log.

A token belongs in ``Authorization: Bearer <token>``. One sent in a query string
(``?token=…``, ``?access_token=…``, or this collector's own token under any name) is refused
with 400 before anything else, and since the request line is what the log shows, every line is
rendered through :func:`render_log_line` first: the collector's tokens are replaced by
``<redacted>`` wherever they appear (also percent-encoded), a query string is shown only when
every parameter in it is one the collector takes (:data:`~srt_cli.collector.protocol.QUERY_PARAMS`),
any other query as ``?<query redacted>``, and control characters are escaped so a request
cannot forge log lines.

Tokens shorter than :data:`MIN_SECRET` characters are not searched for in text (they would
match ordinary words); ``check_startup`` lets them through, the names rule still applies.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final
from urllib.parse import parse_qsl, quote, quote_plus, unquote_plus

from srt_cli.collector.errors import ApiError
from srt_cli.collector.protocol import QUERY_PARAMS, shown

__all__ = ["MIN_SECRET", "REDACTED", "check_query", "render_log_line"]

REDACTED: Final = "<redacted>"
MIN_SECRET: Final = 6
_KNOWN: Final = frozenset(name for names in QUERY_PARAMS.values() for name in names)
#: Parameter names that carry credentials in other APIs (OAuth, S3 presigning, API keys).
_CREDENTIAL_NAME: Final = re.compile(
    r"token|auth|key|secret|passw|pwd|bearer|jwt|sig|credential|session", re.IGNORECASE
)
_QUERY: Final = re.compile(r"\?[^\s\"']*")
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _secrets(secrets: Iterable[str | None]) -> tuple[str, ...]:
    return tuple(s for s in secrets if s is not None and len(s) >= MIN_SECRET)


def _names(query: str) -> list[str]:
    return [name for name, _ in parse_qsl(query, keep_blank_values=True)]


def check_query(query: str, secrets: Iterable[str | None]) -> None:
    """:class:`ApiError` 400 when ``query`` carries a credential (by name, or a token's value)."""
    if not query:
        return
    for name in _names(query):
        if _CREDENTIAL_NAME.search(name):
            raise ApiError(
                400,
                f"query parameter {shown(name, 40)} looks like a credential: send the token as "
                "Authorization: Bearer <token>, never in the URL (URLs are logged)",
            )
    decoded = unquote_plus(query)
    if any(secret in query or secret in decoded for secret in _secrets(secrets)):
        raise ApiError(
            400,
            "the query string holds this collector's token: send it as Authorization: Bearer "
            "<token>, never in the URL (URLs are logged)",
        )


def _render_query(match: re.Match[str], secrets: tuple[str, ...]) -> str:
    query = match.group()[1:]
    decoded = unquote_plus(query)
    if set(_names(query)) <= _KNOWN and not any(secret in decoded for secret in secrets):
        return match.group()
    return "?<query redacted>"


def _escape(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def render_log_line(line: str, secrets: Iterable[str | None]) -> str:
    """``line`` as the request log may show it: no token, no unknown query, no control char."""
    known = _secrets(secrets)
    for secret in known:
        for form in {secret, quote(secret, safe=""), quote_plus(secret)}:
            line = line.replace(form, REDACTED)
    line = _QUERY.sub(lambda match: _render_query(match, known), line)
    return _CONTROL.sub(_escape, line)
