"""Requests to answers: the collector's route table (docs/telemetry-and-bench.md#status-api,
#log-streaming).

:func:`handle` takes a parsed :class:`Request` (already authorised, body already read within the
size limit) and the stores, and returns a :class:`Response`; it never touches a socket. HEAD is
answered like GET (the server leaves the body out). A path no route matches is 404; a route
asked with a method it does not serve is 405 with ``Allow``. A body sent with a
``Content-Type`` other than the route's (:data:`BODY_TYPES`; a JSON body must be UTF-8) is 415;
a body without one is taken as the route's type.

==========  ===============================  =================================================
method      path                             answer
==========  ===============================  =================================================
GET         /                                the UI page (HTML): the job list
GET         /jobs/{id}                       the UI page (HTML): one job
GET         /ui/jobs                         the job list as an HTML fragment (list query)
GET         /ui/jobs/{id}                    one job's page as an HTML fragment
GET         /api/health                      ``{"status": "ok"}``
POST        /api/jobs                        201 ``{job_id, status}`` (the submit record)
GET         /api/jobs                        ``{jobs, total, page, per_page}``, newest first
GET         /api/jobs/{id}                   the job with its ``events``, ``logs``, ``captures``
PUT         /api/jobs/{id}                   ``{job_id, status}`` (one lifecycle event)
DELETE      /api/jobs/{id}                   ``{deleted: true, job_id}``
GET         /api/jobs/{id}/events            ``{job_id, events, next_cursor}``
POST        /api/jobs/{id}/logs              ``{job_id, stored}`` (one log chunk)
GET         /api/jobs/{id}/logs?file=        a streamed log (its last 2 MiB), text
POST        /api/jobs/{id}/captures          ``{job_id, next_offset, complete}``
GET         /api/events                      ``{events, next_cursor}`` (every job)
==========  ===============================  =================================================
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from srt_cli.collector.errors import ApiError
from srt_cli.collector.protocol import (
    parse_capture_query,
    parse_create,
    parse_events_query,
    parse_job_id,
    parse_list_query,
    parse_log_query,
    parse_log_read_query,
    parse_update,
    shown,
)
from srt_cli.collector.store import StatusStore
from srt_cli.collector.ui import INDEX_HTML
from srt_cli.collector.ui_render import render_job, render_job_list
from srt_cli.collector.uploads import UploadStore

__all__ = [
    "BODY_TYPES",
    "App",
    "Request",
    "Response",
    "error_response",
    "handle",
    "json_response",
]


@dataclass(frozen=True, kw_only=True)
class Request:
    method: str
    path: str
    query: str = ""
    body: bytes = b""
    #: The request's ``Content-Type`` header, if it had one.
    content_type: str | None = None


@dataclass(frozen=True, kw_only=True)
class Response:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class App:
    """What the routes act on."""

    store: StatusStore
    uploads: UploadStore


def json_response(status: int, doc: object, headers: Mapping[str, str] | None = None) -> Response:
    return Response(status=status, body=json.dumps(doc).encode(), headers=dict(headers or {}))


def error_response(error: ApiError) -> Response:
    return json_response(error.status, {"detail": error.detail}, error.headers)


Handler = Callable[[App, Request, str], Response]


_HTML = "text/html; charset=utf-8"
#: The most of a streamed log one GET answers (its end).
LOG_READ_LIMIT = 2 * 1024 * 1024


def _index(app: App, request: Request, job_id: str) -> Response:
    return Response(status=200, body=INDEX_HTML.encode(), content_type=_HTML)


def _ui_list(app: App, request: Request, job_id: str) -> Response:
    query = parse_list_query(request.query)
    jobs, total = app.store.jobs(query)
    return Response(status=200, body=render_job_list(jobs, total).encode(), content_type=_HTML)


def _ui_job(app: App, request: Request, job_id: str) -> Response:
    record = app.store.job(job_id)
    if record is None:
        raise _missing(job_id)
    page = render_job({**record, **_uploads(app, job_id)})
    return Response(status=200, body=page.encode(), content_type=_HTML)


def _read_log(app: App, request: Request, job_id: str) -> Response:
    file = parse_log_read_query(request.query)
    data = app.uploads.read_tail(job_id, "logs", file, LOG_READ_LIMIT)
    if data is None:
        if not app.store.exists(job_id) and not app.store.uploads(job_id):
            raise _missing(job_id)
        raise ApiError(404, f"job {job_id} streamed no log {shown(file)} to this collector")
    return Response(status=200, body=data, content_type="text/plain; charset=utf-8")


def _health(app: App, request: Request, job_id: str) -> Response:
    return json_response(200, {"status": "ok"})


def _create(app: App, request: Request, job_id: str) -> Response:
    record = parse_create(request.body)
    _created, status = app.store.create(record)
    # 201 for a repeated or late submit too; its answer carries the status the job is in.
    return json_response(201, {"job_id": record.job_id, "status": status})


def _list(app: App, request: Request, job_id: str) -> Response:
    query = parse_list_query(request.query)
    jobs, total = app.store.jobs(query)
    doc = {"jobs": jobs, "total": total, "page": query.page, "per_page": query.per_page}
    return json_response(200, doc)


def _missing(job_id: str) -> ApiError:
    return ApiError(404, f"job {job_id} is not known to this collector")


def _uploads(app: App, job_id: str) -> dict[str, list[dict[str, Any]]]:
    logs, captures = [], []
    for row in app.store.uploads(job_id):
        if row["kind"] == "logs":
            size = app.uploads.size(job_id, "logs", row["file"])
            logs.append({"file": row["file"], "size": size, "final": row["final"]})
        else:
            size = app.uploads.size(job_id, "captures", row["file"])
            total = row["total"]
            captures.append(
                {"file": row["file"], "size": size, "total": total, "complete": size == total}
            )
    return {"logs": logs, "captures": captures}


def _get(app: App, request: Request, job_id: str) -> Response:
    record = app.store.job(job_id)
    if record is None:
        raise _missing(job_id)
    return json_response(200, {**record, **_uploads(app, job_id)})


def _put(app: App, request: Request, job_id: str) -> Response:
    status = app.store.update(job_id, parse_update(request.body))
    return json_response(200, {"job_id": job_id, "status": status})


def _delete(app: App, request: Request, job_id: str) -> Response:
    known = app.store.delete(job_id)
    app.uploads.delete_job(job_id)
    if not known:
        raise _missing(job_id)
    return json_response(200, {"deleted": True, "job_id": job_id})


def _job_events(app: App, request: Request, job_id: str) -> Response:
    query = parse_events_query(request.query, feed=False)
    if not app.store.exists(job_id):
        raise _missing(job_id)
    events = app.store.events(job_id, after=query.after, limit=query.limit)
    cursor = events[-1]["id"] if events else query.after
    return json_response(200, {"job_id": job_id, "events": events, "next_cursor": cursor})


def _feed(app: App, request: Request, job_id: str) -> Response:
    query = parse_events_query(request.query, feed=True)
    events = app.store.events(query.job_id, after=query.after, limit=query.limit)
    cursor = events[-1]["id"] if events else query.after
    return json_response(200, {"events": events, "next_cursor": cursor})


def _logs(app: App, request: Request, job_id: str) -> Response:
    chunk = parse_log_query(request.query)
    result = app.uploads.write_chunk(job_id, "logs", chunk.file, chunk.offset, request.body)
    app.store.record_upload(job_id, "logs", chunk.file, final=chunk.final, total=None)
    return json_response(200, {"job_id": job_id, "stored": int(result.stored)})


def _captures(app: App, request: Request, job_id: str) -> Response:
    chunk = parse_capture_query(request.query)
    end = chunk.offset + len(request.body)
    if end > chunk.total:
        raise ApiError(
            422,
            f"capture {chunk.file}: a chunk of {len(request.body)} bytes at offset "
            f"{chunk.offset} ends past total={chunk.total}",
        )
    app.uploads.write_chunk(job_id, "captures", chunk.file, chunk.offset, request.body)
    complete = end == chunk.total
    app.store.record_upload(job_id, "captures", chunk.file, final=complete, total=chunk.total)
    return json_response(200, {"job_id": job_id, "next_offset": end, "complete": complete})


#: The media type of the body each route reads (the other routes read none).
BODY_TYPES: dict[Handler, str] = {
    _create: "application/json",
    _put: "application/json",
    _logs: "application/octet-stream",
    _captures: "application/octet-stream",
}
_UTF8 = ("utf-8", "utf8")


def _check_media(route: Handler, request: Request) -> None:
    """:class:`ApiError` 415 for a body the route cannot read as its media type."""
    wanted = BODY_TYPES.get(route)
    if wanted is None or request.content_type is None:
        return
    media, *params = request.content_type.split(";")
    charsets = [
        value.strip().strip('"').lower()
        for key, _, value in (param.partition("=") for param in params)
        if key.strip().lower() == "charset"
    ]
    json_charset_ok = wanted != "application/json" or all(c in _UTF8 for c in charsets)
    if media.strip().lower() != wanted or not json_charset_ok:
        raise ApiError(
            415,
            f"Content-Type {shown(request.content_type, 80)} is not read on {request.method} "
            f"{request.path}; send {wanted}" + (" (UTF-8)" if wanted == "application/json" else ""),
        )


#: path template -> {method: handler}; ``{id}`` is a job id.
_ROUTES: tuple[tuple[tuple[str, ...], dict[str, Handler]], ...] = (
    ((), {"GET": _index}),
    (("jobs", "{id}"), {"GET": _index}),
    (("ui", "jobs"), {"GET": _ui_list}),
    (("ui", "jobs", "{id}"), {"GET": _ui_job}),
    (("api", "health"), {"GET": _health}),
    (("api", "jobs"), {"GET": _list, "POST": _create}),
    (("api", "jobs", "{id}"), {"GET": _get, "PUT": _put, "DELETE": _delete}),
    (("api", "jobs", "{id}", "events"), {"GET": _job_events}),
    (("api", "jobs", "{id}", "logs"), {"GET": _read_log, "POST": _logs}),
    (("api", "jobs", "{id}", "captures"), {"POST": _captures}),
    (("api", "events"), {"GET": _feed}),
)


def _match(path: str) -> tuple[dict[str, Handler], str] | None:
    parts = tuple(path.strip("/").split("/")) if path.strip("/") else ()
    if path != "/" + "/".join(parts):
        return None  # a trailing or doubled slash is not a route
    for template, methods in _ROUTES:
        if len(template) != len(parts):
            continue
        job_id = ""
        for want, got in zip(template, parts, strict=True):
            if want == "{id}":
                job_id = got
            elif want != got:
                break
        else:
            return methods, job_id
    return None


def handle(request: Request, app: App) -> Response:
    """The answer to one request; :class:`ApiError` becomes its JSON error reply."""
    method = "GET" if request.method == "HEAD" else request.method
    try:
        matched = _match(request.path)
        if matched is None:
            raise ApiError(404, f"no route {shown(request.path)}; the routes are listed at GET /")
        methods, job_id = matched
        route = methods.get(method)
        if route is None:
            allowed = sorted({*methods, *(("HEAD",) if "GET" in methods else ())})
            raise ApiError(
                405,
                f"{request.method} is not served on {request.path}; allowed: {', '.join(allowed)}",
                headers={"Allow": ", ".join(allowed)},
            )
        if job_id:
            parse_job_id(job_id)
        _check_media(route, request)
        return route(app, request, job_id)
    except ApiError as error:
        return error_response(error)
