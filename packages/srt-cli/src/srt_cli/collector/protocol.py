"""The collector's wire format, validated (pure): job bodies, query strings, upload parameters.

docs/telemetry-and-bench.md#status-api, #log-streaming. Every function here takes text or bytes and
returns a frozen value or raises :class:`ApiError` (422 for a value that is not allowed, 400 for an
upload ``file`` that would leave its folder) whose detail names the field, the bad value (at
most :data:`SHOWN_CHARS` characters of it) and what is allowed. Unknown body fields and query
parameters are refused, not ignored: a typo must not be silently dropped.

The job bodies are the runtime's own msgspec structs (srt_runtime.reporting.status): a create is
decoded as :class:`CreateRequest` (``JobCreate``, refusing unknown fields), an update as
:class:`UpdateRequest` (``JobUpdate``, with its typed ``report``, plus the collector-only
``artifacts`` and ``benchmark_results``). Only what a type cannot say is checked here by hand:
the job id's alphabet, times with a time zone, and ``exit_code`` within SQLite's 64-bit integers.

Hostile input is refused here, never left to crash a layer below: a body must be strict UTF-8
JSON, at most :data:`MAX_DEPTH` containers deep (SQLite and the merge of ``metadata`` recurse),
with finite numbers and no lone surrogates (SQLite cannot store them); an upload ``file`` is at
most :data:`MAX_FILE_PARTS` components of at most :data:`MAX_NAME_BYTES` bytes, without control
characters. The query parameters of every route are declared once (:data:`QUERY_PARAMS`), which
is also what the request log may show (:mod:`~srt_cli.collector.redact`).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Final, TypeVar, get_args
from urllib.parse import parse_qs

import msgspec

from srt_cli.collector.errors import ApiError
from srt_runtime.reporting.status import JobCreate, JobStage, JobStatus, JobUpdate

__all__ = [
    "JOB_STAGES",
    "JOB_STATUSES",
    "MAX_BODY",
    "MAX_DEPTH",
    "MAX_EVENTS_LIMIT",
    "MAX_FILE_BYTES",
    "MAX_FILE_PARTS",
    "MAX_NAME_BYTES",
    "MAX_PER_PAGE",
    "QUERY_PARAMS",
    "SHOWN_CHARS",
    "CaptureChunk",
    "CreateRequest",
    "EventsQuery",
    "ListQuery",
    "LogChunk",
    "UpdateRequest",
    "parse_capture_query",
    "parse_create",
    "parse_events_query",
    "parse_job_id",
    "parse_list_query",
    "parse_log_query",
    "parse_log_read_query",
    "parse_update",
    "shown",
]

#: The status API's vocabulary, spelled once by the reporter's contract (srt_runtime.reporting).
JOB_STATUSES: Final = get_args(JobStatus)
JOB_STAGES: Final = get_args(JobStage)
#: Largest request body accepted (one log chunk of the streamer is at most this).
MAX_BODY: Final = 1024 * 1024
MAX_PER_PAGE: Final = 100
MAX_EVENTS_LIMIT: Final = 1000
#: Deepest nesting of objects and arrays in a body (the reporters send 3 levels at most).
MAX_DEPTH: Final = 32
#: Limits of an upload ``file``: bytes in all (UTF-8), components, bytes per component (the
#: longest name Linux file systems take).
MAX_FILE_BYTES: Final = 1024
MAX_FILE_PARTS: Final = 16
MAX_NAME_BYTES: Final = 255
#: At most this many characters of a bad value are echoed in an answer.
SHOWN_CHARS: Final = 200

#: The query parameters of every route that takes some (one table: parsing and the log use it).
QUERY_PARAMS: Final = {
    "list": ("page", "per_page", "status", "cluster"),
    "job_events": ("after", "limit"),
    "feed": ("after", "limit", "job_id"),
    "logs": ("file", "offset", "final", "cluster"),
    "log_read": ("file",),
    "captures": ("file", "offset", "total", "cluster"),
}

_JOB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,127}")
_SEGMENT = re.compile(r"out-\d+\.parquet")
_INT64 = 2**63
#: More digits than this cannot be a count below 2**63 (and int() refuses 4300+ digits).
_MAX_DIGITS = 19
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class CreateRequest(JobCreate, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``POST /api/jobs``: the runtime's submit record, unknown fields refused."""


class UpdateRequest(
    JobUpdate, frozen=True, kw_only=True, omit_defaults=True, forbid_unknown_fields=True
):
    """``PUT /api/jobs/{id}``: the runtime's lifecycle event plus what other clients may attach
    (the collector's superset); None means "not sent"."""

    artifacts: dict[str, Any] | None = None
    benchmark_results: dict[str, Any] | list[Any] | None = None


@dataclass(frozen=True, kw_only=True)
class ListQuery:
    page: int
    per_page: int
    status: str | None
    cluster: str | None


@dataclass(frozen=True, kw_only=True)
class EventsQuery:
    after: int
    limit: int
    job_id: str | None


@dataclass(frozen=True, kw_only=True)
class LogChunk:
    file: str
    offset: int
    final: bool
    cluster: str | None


@dataclass(frozen=True, kw_only=True)
class CaptureChunk:
    file: str
    offset: int
    total: int
    cluster: str | None


def shown(value: str, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)``, cut to its first ``limit`` characters when longer (saying so)."""
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}... ({len(value)} characters)"


def _invalid(detail: str) -> ApiError:
    return ApiError(422, detail)


def _one_of(values: tuple[str, ...]) -> str:
    return "one of " + ", ".join(values)


def parse_job_id(raw: str, where: str = "job id") -> str:
    """A job id that is safe in a URL and as a folder name (Slurm ids, ``local-…`` ids)."""
    if not _JOB_ID.fullmatch(raw):
        raise _invalid(
            f"{where} {shown(raw)} is not a job id: use 1-128 letters, digits, '.', '_', '+' "
            "or '-', starting with a letter or digit"
        )
    return raw


def _no_constant(name: str) -> object:
    raise _invalid(f"the body has {name}, which is not JSON; send finite numbers")


def _object(body: bytes) -> dict[str, Any]:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _invalid(
            f"the body is not UTF-8 (byte {exc.start}: {exc.reason}); send a JSON object in UTF-8"
        ) from exc
    try:
        doc = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise _invalid(f"the body is not JSON: {exc}; send a JSON object") from exc
    except RecursionError as exc:
        raise _invalid(
            f"the body is nested too deeply; at most {MAX_DEPTH} levels of objects and arrays"
        ) from exc
    except ValueError as exc:  # a number of more than 4300 digits
        raise _invalid(f"the body is not usable JSON: {str(exc)[:SHOWN_CHARS]}") from exc
    if not isinstance(doc, dict):
        raise _invalid(f"the body is a JSON {type(doc).__name__}, not an object")
    _check_plain(doc)
    return doc


#: A place in a body: (the parent's trail, the key or index), built into ``$.a[0].b`` on error.
_Trail = tuple["_Trail", str | int] | None


def _where(trail: _Trail) -> str:
    steps: list[str | int] = []
    while trail is not None:
        trail, step = trail
        steps.append(step)
    out = "$"
    for step in reversed(steps):
        out += f"[{step}]" if isinstance(step, int) else f".{step[:40]}"
    return out


def _check_text(value: str, trail: _Trail) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _invalid(
            f"{_where(trail)}: a string holds a lone UTF-16 surrogate "
            f"({value[exc.start]!r}); send valid Unicode"
        ) from exc


def _check_plain(doc: dict[str, Any]) -> None:
    """No container deeper than MAX_DEPTH, no lone surrogate, no infinite number (iterative:
    the body may be built to exhaust a recursion)."""
    stack: list[tuple[object, int, _Trail]] = [(doc, 1, None)]
    while stack:
        value, depth, trail = stack.pop()
        if isinstance(value, dict | list):
            if depth > MAX_DEPTH:
                raise _invalid(
                    f"{_where(trail)}: nested {depth} levels deep; at most {MAX_DEPTH} levels "
                    "of objects and arrays"
                )
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if isinstance(key, str):
                    _check_text(key, trail)
                stack.append((item, depth + 1, (trail, key)))
        elif isinstance(value, str):
            _check_text(value, trail)
        elif isinstance(value, float) and not math.isfinite(value):
            raise _invalid(f"{_where(trail)}: {value} is not a JSON number; send finite numbers")


#: What a body field may be, where a type's own message would not say (Literal fields).
_ALLOWED: Final[Mapping[str, tuple[str, ...]]] = {"$.status": JOB_STATUSES, "$.stage": JOB_STAGES}
_Body = TypeVar("_Body", CreateRequest, UpdateRequest)
_AT = re.compile(r" - at `(\$[^`]*)`$")


def _cut(text: str, limit: int = SHOWN_CHARS) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _decode(doc: dict[str, Any], kind: type[_Body]) -> _Body:
    """``doc`` (already checked by :func:`_object`) as ``kind``; a 422 names the ``$.path``, the
    problem and, for an unknown field or a value outside a vocabulary, what is allowed."""
    try:
        return msgspec.convert(doc, type=kind, strict=True)
    except msgspec.ValidationError as exc:
        message = str(exc)
        at = _AT.search(message)
        if message.startswith("Object contains unknown field"):
            names = ", ".join(f.name for f in msgspec.structs.fields(kind))
            raise _invalid(f"{_cut(message, 120)}; allowed: {names}") from exc
        if at is not None and at.group(1) in _ALLOWED:
            raise _invalid(f"{_cut(message)}; {_one_of(_ALLOWED[at.group(1)])}") from exc
        raise _invalid(_cut(message)) from exc


def _check_time(name: str, value: str | None) -> None:
    if value is None:
        return
    try:
        stamp = dt.datetime.fromisoformat(value)
    except ValueError:
        stamp = None
    if stamp is None or stamp.tzinfo is None or "T" not in value:
        raise _invalid(
            f"$.{name}: {shown(value)} is not an ISO-8601 time with a time zone "
            "(e.g. 2026-11-29T15:12:09Z)"
        )


def parse_create(body: bytes) -> CreateRequest:
    """The body of ``POST /api/jobs`` (srt_runtime.reporting.status.JobCreate)."""
    request = _decode(_object(body), CreateRequest)
    parse_job_id(request.job_id, "$.job_id:")
    _check_time("submitted_at", request.submitted_at)
    return request


def parse_update(body: bytes) -> UpdateRequest:
    """The body of ``PUT /api/jobs/{id}`` (srt_runtime.reporting.status.JobUpdate, plus the
    collector-only ``artifacts`` and ``benchmark_results``)."""
    request = _decode(_object(body), UpdateRequest)
    _check_time("updated_at", request.updated_at)
    _check_time("started_at", request.started_at)
    _check_time("completed_at", request.completed_at)
    code = request.exit_code
    if code is not None and not -_INT64 <= code < _INT64:
        raise _invalid(f"$.exit_code: {_cut(str(code), 40)} is not a 64-bit integer")
    return request


def _params(query: str, allowed: tuple[str, ...]) -> dict[str, str]:
    parsed = parse_qs(query, keep_blank_values=True)
    unknown = sorted(set(parsed) - set(allowed))
    if unknown:
        raise _invalid(
            f"unknown query parameter {shown(unknown[0])}; allowed: {', '.join(allowed) or 'none'}"
        )
    for name, values in parsed.items():
        if len(values) > 1:
            raise _invalid(
                f"query parameter {shown(name)} is given {len(values)} times; give it once"
            )
    return {name: values[0] for name, values in parsed.items()}


def _integer(params: Mapping[str, str], name: str, default: int | None, lo: int, hi: int) -> int:
    raw = params.get(name)
    if raw is None:
        if default is None:
            raise _invalid(f"query parameter {name!r} is required")
        return default
    digits = raw.isascii() and raw.isdigit() and len(raw) <= _MAX_DIGITS
    value = int(raw) if digits else None
    if value is None or not lo <= value <= hi:
        upper = "" if hi >= _INT64 - 1 else f" to {hi}"
        raise _invalid(f"query parameter {name}={shown(raw)}: expected an integer from {lo}{upper}")
    return value


def _optional(params: Mapping[str, str], name: str) -> str | None:
    return params.get(name) or None


def parse_list_query(query: str) -> ListQuery:
    """``GET /api/jobs?page=1&per_page=50&status=&cluster=`` (per_page at most 100)."""
    params = _params(query, QUERY_PARAMS["list"])
    status = _optional(params, "status")
    if status is not None and status not in JOB_STATUSES:
        raise _invalid(
            f"query parameter status={shown(status)} is not allowed; {_one_of(JOB_STATUSES)}"
        )
    return ListQuery(
        page=_integer(params, "page", 1, 1, _INT64 - 1),
        per_page=_integer(params, "per_page", 50, 1, MAX_PER_PAGE),
        status=status,
        cluster=_optional(params, "cluster"),
    )


def parse_events_query(query: str, *, feed: bool) -> EventsQuery:
    """``…/events?after=0&limit=100`` (limit at most 1000); the global feed also takes job_id."""
    params = _params(query, QUERY_PARAMS["feed" if feed else "job_events"])
    job_id = _optional(params, "job_id")
    return EventsQuery(
        after=_integer(params, "after", 0, 0, _INT64 - 1),
        limit=_integer(params, "limit", 100, 1, MAX_EVENTS_LIMIT),
        job_id=None if job_id is None else parse_job_id(job_id, "query parameter job_id:"),
    )


def _relative(raw: str | None) -> str:
    if not raw:
        raise _invalid("query parameter 'file' is required")
    path = PurePosixPath(raw)
    parts = raw.split("/")
    if path.is_absolute() or ".." in parts:
        raise ApiError(
            400,
            f"file={shown(raw)} must be a path relative to the job's log folder, without '..'",
        )
    if "\x00" in raw or any(part in ("", ".") for part in parts):
        raise _invalid(f"file={shown(raw)} has an empty or '.' path component or a NUL byte")
    control = _CONTROL.search(raw)
    if control is not None:
        raise _invalid(
            f"file={shown(raw)} has the control character {control.group()!r}; name files with "
            "printable characters"
        )
    size = len(raw.encode("utf-8"))
    longest = max(parts, key=lambda part: len(part.encode("utf-8")))
    if len(parts) > MAX_FILE_PARTS or size > MAX_FILE_BYTES:
        raise _invalid(
            f"file={shown(raw)} is {len(parts)} components and {size} bytes long; at most "
            f"{MAX_FILE_PARTS} components and {MAX_FILE_BYTES} bytes"
        )
    if len(longest.encode("utf-8")) > MAX_NAME_BYTES:
        raise _invalid(
            f"file={shown(raw)} has a component of {len(longest.encode('utf-8'))} bytes "
            f"({shown(longest, 40)}); at most {MAX_NAME_BYTES} bytes per component"
        )
    return raw


def parse_log_query(query: str) -> LogChunk:
    """``POST /api/jobs/{id}/logs?file=<rel>&offset=<n>[&final=1][&cluster=]``."""
    params = _params(query, QUERY_PARAMS["logs"])
    final = params.get("final")
    if final not in (None, "0", "1"):
        raise _invalid(f"query parameter final={shown(final)}: expected 1 (or 0)")
    return LogChunk(
        file=_relative(params.get("file")),
        offset=_integer(params, "offset", None, 0, _INT64 - 1),
        final=final == "1",
        cluster=_optional(params, "cluster"),
    )


def parse_log_read_query(query: str) -> str:
    """``GET /api/jobs/{id}/logs?file=<rel>``: the file's relative path."""
    return _relative(_params(query, QUERY_PARAMS["log_read"]).get("file"))


def parse_capture_query(query: str) -> CaptureChunk:
    """``POST /api/jobs/{id}/captures?file=out-N.parquet&offset=<n>&total=<size>``."""
    params = _params(query, QUERY_PARAMS["captures"])
    name = _relative(params.get("file"))
    if not _SEGMENT.fullmatch(name):
        raise ApiError(400, f"file={shown(name)} is not a capture segment name (out-<N>.parquet)")
    offset = _integer(params, "offset", None, 0, _INT64 - 1)
    total = _integer(params, "total", None, 0, _INT64 - 1)
    if offset > total:
        raise _invalid(f"offset {offset} is past total {total}")
    return CaptureChunk(file=name, offset=offset, total=total, cluster=_optional(params, "cluster"))
