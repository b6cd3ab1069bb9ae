"""`srtctl status-server` against hostile requests: every malformed request is a 4xx (never a
5xx, never a dropped connection), conflicting ``Content-Length`` headers are refused, and a
token sent in the URL is refused and never reaches the request log.

Every probe is sent as raw bytes over a real socket to a collector on 127.0.0.1 (httpx and
http.client refuse to send most of them)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from collector_testkit import READ, WRITE, serving, settings

from srt_cli.collector import Collector

T0 = "2026-11-29T15:00:00Z"


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


def _send(port: int, data: bytes) -> Answer:
    """Send ``data`` as is, half-close, and read the whole answer (the first response)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        received = b""
        while True:
            got = sock.recv(65536)
            if not got:
                break
            received += got
    assert b"\r\n\r\n" in received, f"no answer (connection closed): {received[:200]!r}"
    head, _, rest = received.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines:
        key, _, value = line.partition(":")
        headers[key.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    return Answer(int(status_line.split()[1]), headers, rest[:length])


def _request(
    method: str,
    target: str,
    body: bytes = b"",
    *,
    headers: tuple[str, ...] = (),
    length: bool = True,
) -> bytes:
    lines = [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1", *headers]
    if length and body:
        lines.append(f"Content-Length: {len(body)}")
    return "\r\n".join(lines).encode("latin-1") + b"\r\n\r\n" + body


def _create(doc: object) -> bytes:
    return _request(
        "POST", "/api/jobs", json.dumps(doc).encode(), headers=("Content-Type: application/json",)
    )


def _raw_create(body: bytes) -> bytes:
    return _request("POST", "/api/jobs", body, headers=("Content-Type: application/json",))


def _log(file: str, offset: str = "0", body: bytes = b"x") -> bytes:
    return _request("POST", f"/api/jobs/1/logs?file={file}&offset={offset}", body)


def _nested(depth: int) -> object:
    doc: object = 1
    for _ in range(depth):
        doc = {"a": doc}
    return doc


JOB = {"job_id": "1", "job_name": "n", "submitted_at": T0}
_JOB_HEAD = b'{"job_id":"1","submitted_at":"' + T0.encode() + b'",'
CAPTURES = "/api/jobs/1/captures?file="


def _json_as(content_type: str, method: str = "POST", path: str = "/api/jobs") -> bytes:
    return _request(method, path, json.dumps(JOB).encode(), headers=(content_type,))


def _framed(*headers: str, body: bytes = b'{"a": 1}') -> bytes:
    """A POST whose framing headers are given as is (no Content-Length added)."""
    return _request("POST", "/api/jobs", body, headers=headers, length=False)


def _with_headers(*headers: str) -> bytes:
    return _request("GET", "/api/health", headers=headers)


def _get(target: str) -> bytes:
    return _request("GET", target)


_DEEP_PUT = {"status": "running", "updated_at": T0, "artifacts": _nested(100)}

#: (probe id, raw request, expected status). Every one of them is malformed or hostile.
PROBES: list[tuple[str, bytes, int]] = [
    # -- JSON bodies
    ("deep-json-array", _raw_create(b"[" * 100_000 + b"]" * 100_000), 422),
    ("deep-json-object", _raw_create(b'{"a":' * 50_000 + b"1" + b"}" * 50_000), 422),
    ("metadata-deeper-than-the-limit", _create({**JOB, "metadata": _nested(40)}), 422),
    ("metadata-900-deep", _create({**JOB, "metadata": _nested(900)}), 422),
    ("put-artifacts-100-deep", _request("PUT", "/api/jobs/1", json.dumps(_DEEP_PUT).encode()), 422),
    ("integer-of-5000-digits", _raw_create(b'{"job_id": ' + b"9" * 5000 + b"}"), 422),
    ("nan-in-metadata", _raw_create(_JOB_HEAD + b'"job_name":"n","metadata":{"x":NaN}}'), 422),
    ("float-overflow", _raw_create(_JOB_HEAD + b'"job_name":"n","metadata":{"x":1e999}}'), 422),
    ("lone-surrogate-escape", _raw_create(_JOB_HEAD + b'"job_name":"\\ud800"}'), 422),
    (
        "surrogate-in-a-key",
        _raw_create(_JOB_HEAD + b'"job_name":"n","metadata":{"\\udfff":1}}'),
        422,
    ),
    ("encoded-surrogate-bytes", _raw_create(_JOB_HEAD + b'"job_name":"\xed\xa0\x80"}'), 422),
    ("invalid-utf8-body", _raw_create(b'{"job_id":"\xff\xfe"}'), 422),
    ("utf8-bom", _raw_create(b"\xef\xbb\xbf" + json.dumps(JOB).encode()), 422),
    ("json-not-an-object", _raw_create(b"[1, 2]"), 422),
    ("empty-json-body", _framed("Content-Length: 0", body=b""), 422),
    ("key-of-half-a-megabyte", _create({**JOB, "x" * 500_000: 1}), 422),
    ("wrong-type-of-half-a-megabyte", _create({**JOB, "job_name": [1] * 150_000}), 422),
    # -- content types
    ("json-route-sent-text", _json_as("Content-Type: text/plain"), 415),
    ("json-route-sent-latin1", _json_as("Content-Type: application/json; charset=latin-1"), 415),
    (
        "put-sent-a-form",
        _json_as("Content-Type: application/x-www-form-urlencoded", "PUT", "/api/jobs/1"),
        415,
    ),
    (
        "upload-sent-json",
        _json_as("Content-Type: application/json", "POST", "/api/jobs/1/logs?file=a&offset=0"),
        415,
    ),
    # -- upload names and offsets
    ("upload-name-of-300-chars", _log("a" * 300 + ".out"), 422),
    ("upload-path-of-2000-chars", _log("/".join(["abcdefghi"] * 200)), 422),
    ("upload-path-2000-deep", _log("a/" * 2000 + "x.out"), 422),
    ("upload-path-with-newline", _log("a%0Ab.out"), 422),
    ("upload-path-with-escape", _log("a%1B%5B31m.out"), 422),
    ("upload-path-with-nul", _log("a%00.out"), 422),
    ("upload-path-traversal", _log("..%2F..%2Fetc%2Fpasswd"), 400),
    ("upload-absolute-path", _log("%2Fetc%2Fpasswd"), 400),
    ("offset-negative", _log("a.out", "-1"), 422),
    ("offset-not-a-number", _log("a.out", "0x10"), 422),
    ("offset-superscript-digit", _log("a.out", "%C2%B2"), 422),
    ("offset-past-int64", _log("a.out", str(2**63)), 422),
    ("offset-of-5000-digits", _log("a.out", "9" * 5000), 422),
    ("offset-past-the-stored-end", _log("b.out", str(2**62)), 409),
    ("offset-given-twice", _log("a.out", "0&offset=1"), 422),
    (
        "capture-offset-past-total",
        _request("POST", CAPTURES + "out-0.parquet&offset=5&total=3", b"x"),
        422,
    ),
    (
        "capture-chunk-past-total",
        _request("POST", CAPTURES + "out-0.parquet&offset=0&total=1", b"xyz"),
        422,
    ),
    (
        "capture-bad-name",
        _request("POST", CAPTURES + "..%2Fout-0.parquet&offset=0&total=1", b"x"),
        400,
    ),
    # -- framing
    ("conflicting-content-length", _framed("Content-Length: 8", "Content-Length: 3"), 400),
    ("content-length-list", _framed("Content-Length: 8, 8"), 400),
    ("content-length-negative", _framed("Content-Length: -2"), 400),
    ("content-length-plus-sign", _framed("Content-Length: +8"), 400),
    ("content-length-superscript", _framed("Content-Length: \xb2"), 400),
    ("content-length-of-5000-digits", _framed("Content-Length: " + "9" * 5000), 413),
    ("content-length-and-chunked", _framed("Content-Length: 5", "Transfer-Encoding: chunked"), 411),
    ("body-shorter-than-its-length", _framed("Content-Length: 100"), 400),
    ("header-line-of-70-kb", _with_headers("X-Big: " + "a" * 70_000), 431),
    ("200-headers", _with_headers(*(f"X-{i}: v" for i in range(200))), 431),
    ("header-without-colon", _with_headers("no colon here"), 400),
    ("header-name-with-a-space", _with_headers("Bad Name: x"), 400),
    ("folded-header", _with_headers("X-A: a", " folded"), 400),
    ("request-line-of-70-kb", _get("/api/jobs?cluster=" + "a" * 70_000), 414),
    ("unknown-method", _request("BREW", "/api/health"), 405),
    ("lower-case-method", _request("get", "/api/health"), 405),
    ("unknown-method-with-a-body", _request("BREW", "/api/jobs", b"{}"), 405),
    ("http-0.9", b"GET /api/health\r\n", 400),
    ("http-2-request-line", b"GET /api/health HTTP/2.0\r\nHost: x\r\n\r\n", 400),
    ("bad-http-version", b"GET /api/health HTTP/x.y\r\nHost: x\r\n\r\n", 400),
    ("four-word-request-line", b"GET /api/health HTTP/1.1 extra\r\nHost: x\r\n\r\n", 400),
    ("binary-request-line", b"\x00\x01\x02\xff \xfe\r\n\r\n", 400),
    ("absolute-url-with-bad-ipv6", _get("http://[::1/api/health"), 400),
    # -- paths and query strings
    ("invalid-utf8-in-the-path", _get("/api/jobs/\xff\xfe"), 422),
    ("nul-in-the-path", _get("/api/jobs/a\x00b"), 422),
    ("job-id-of-60-kb", _get("/api/jobs/" + "a" * 60_000), 422),
    ("route-of-60-kb", _get("/" + "a" * 60_000), 404),
    ("invalid-utf8-in-the-query", _get("/api/jobs?cluster=%FF%FE&page=%FF"), 422),
    ("unknown-query-parameter", _get("/api/jobs?" + "x" * 5000 + "=1"), 422),
    ("page-far-past-the-end", _get(f"/api/jobs?page={2**63 - 1}"), 200),
    ("token-in-the-query", _get("/api/jobs?token=abc"), 400),
    ("access-token-in-the-query", _get("/api/health?access_token=abc"), 400),
    ("encoded-token-name-in-the-query", _get("/api/jobs?%74oken=abc"), 400),
]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Collector, list[str]]]:
    lines: list[str] = []
    with serving(settings(tmp_path_factory.mktemp("hostile")), log=lines) as running:
        yield running, lines


@pytest.mark.parametrize(("probe", "status"), [p[1:] for p in PROBES], ids=[p[0] for p in PROBES])
def test_a_hostile_request_is_answered_4xx(
    hostile: tuple[Collector, list[str]], probe: bytes, status: int
) -> None:
    collector, lines = hostile
    before = len(lines)
    answer = _send(collector.port, probe)
    assert answer.status == status, answer.body[:300]
    if status >= 400:
        detail = json.loads(answer.body)["detail"]
        # The detail says what is wrong without echoing the whole bad value.
        assert isinstance(detail, str) and 0 < len(detail) <= 600, detail[:300]
        assert answer.headers["content-type"] == "application/json"
    assert not [line for line in lines[before:] if line.startswith("error:")]
    # A request cannot put control characters (a forged line, terminal escapes) in the log.
    assert all(line.isprintable() for line in lines[before:]), lines[before:]
    # The collector still serves after every probe.
    assert _send(collector.port, _get("/api/health")).status == 200


def _detail(answer: Answer) -> str:
    detail = json.loads(answer.body)["detail"]
    assert isinstance(detail, str)
    return detail


def test_conflicting_content_lengths_are_refused_and_the_connection_closed(
    hostile: tuple[Collector, list[str]],
) -> None:
    collector, _ = hostile
    # Smuggling shape: read as 3 bytes, the rest would be parsed as a second request.
    smuggled = b"{}\nGET /api/jobs HTTP/1.1\r\nHost: x\r\n\r\n"
    probe = _framed("Content-Length: 3", f"Content-Length: {len(smuggled)}", body=smuggled)
    answer = _send(collector.port, probe)
    assert (answer.status, _detail(answer)) == (
        400,
        f"Content-Length is given 2 times with different values ('3', '{len(smuggled)}'); "
        "send it once",
    )
    assert answer.headers["connection"] == "close"
    same = _framed("Content-Length: 2", "Content-Length: 2", body=b"{}")
    assert _send(collector.port, same).status == 422  # one length, said twice: the JSON is read


#: Every way of putting a token in the URL, and its status (with the write token in the header
#: where auth would otherwise refuse first).
TOKEN_PROBES: list[tuple[str, str, int]] = [
    ("named-token", f"/api/jobs?token={WRITE}", 400),
    ("access-token", f"/api/jobs/1?access_token={WRITE}", 400),
    ("read-token", f"/api/jobs?api_key={READ}", 400),
    ("token-under-another-name", f"/api/jobs?cluster={WRITE}", 400),
    ("percent-encoded-token", "/api/jobs?x=" + "".join(f"%{b:02X}" for b in WRITE.encode()), 400),
    ("token-on-a-public-path", f"/api/health?auth={WRITE}", 400),
    ("token-on-an-unknown-route", f"/nowhere?token={WRITE}", 400),
    ("token-in-an-upload", f"/api/jobs/1/logs?file=a.out&offset=0&token={WRITE}", 400),
]


@pytest.mark.parametrize(
    ("target", "status"), [p[1:] for p in TOKEN_PROBES], ids=[p[0] for p in TOKEN_PROBES]
)
@pytest.mark.parametrize("with_header", [False, True], ids=["no-header", "bearer-header"])
def test_a_token_in_the_query_is_refused_and_never_logged(
    tmp_path: Path, target: str, status: int, with_header: bool
) -> None:
    lines: list[str] = []
    header = (f"Authorization: Bearer {WRITE}",) if with_header else ()
    with serving(settings(tmp_path, write=WRITE, read=READ), log=lines) as running:
        answer = _send(running.port, _request("GET", target, headers=header))
        post = _send(running.port, _request("POST", target, b"x", headers=header))
        # The same token inside a request line the parser refuses is not logged either.
        broken = _send(running.port, f"GET {target} HTTP/1.1 extra\r\n\r\n".encode())
    assert (answer.status, post.status, broken.status) == (status, status, 400)
    assert "never in the URL" in _detail(answer)
    assert WRITE not in _detail(answer) and READ not in _detail(answer)
    assert len(lines) >= 3
    for line in lines:
        assert WRITE not in line and READ not in line, line
        assert "%77%2D" not in line.upper(), line  # nor percent-encoded
    assert any("?<query redacted>" in line or "<redacted>" in line for line in lines)


def test_the_log_keeps_the_queries_the_collector_takes(tmp_path: Path) -> None:
    lines: list[str] = []
    with serving(settings(tmp_path), log=lines) as running:
        _send(running.port, _log("w/a.out", "0"))
        _send(running.port, _get("/api/jobs?page=2&per_page=5"))
        _send(running.port, _get("/api/jobs?nonsense=1"))
    assert lines == [
        '127.0.0.1 "POST /api/jobs/1/logs?file=w/a.out&offset=0 HTTP/1.1" 200 -',
        '127.0.0.1 "GET /api/jobs?page=2&per_page=5 HTTP/1.1" 200 -',
        '127.0.0.1 "GET /api/jobs?<query redacted> HTTP/1.1" 422 -',
    ]
