"""`srtctl status-server`: every route over real HTTP on 127.0.0.1, the access rules, start-up
errors, the upload routes, the product's own reporter and streamer against it, and one real
`srtctl status-server` process."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import selectors
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cli_testkit import Invoke
from collector_testkit import ORIGIN, READ, WRITE, busy_port, raw_request, serving, settings

from srt_cli.collector import Collector, CollectorConfigError, CollectorStartError, open_collector
from srt_cli.collector.auth import is_loopback
from srt_cli.collector.protocol import MAX_BODY

T0 = "2026-11-29T15:00:00Z"
T1 = "2026-11-29T15:00:01Z"


@pytest.fixture
def collector(tmp_path: Path) -> Iterator[Collector]:
    with serving(settings(tmp_path)) as running:
        yield running


@pytest.fixture
def client(collector: Collector) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=collector.url, timeout=5.0) as http:
        yield http


def _create(client: httpx.Client, job_id: str, **extra: Any) -> httpx.Response:
    body = {"job_id": job_id, "job_name": f"name-{job_id}", "submitted_at": T0, **extra}
    return client.post("/api/jobs", json=body)


def _put(client: httpx.Client, job_id: str, status: str, **extra: Any) -> httpx.Response:
    return client.put(f"/api/jobs/{job_id}", json={"status": status, "updated_at": T1, **extra})


def _events(client: httpx.Client, job_id: str) -> list[tuple[str, str | None, str | None]]:
    doc = client.get(f"/api/jobs/{job_id}").json()
    return [(e["status"], e["stage"], e["message"]) for e in doc["events"]]


# -- routes ----------------------------------------------------------------------------------


def test_health_ui_and_head(client: httpx.Client, collector: Collector) -> None:
    health = client.get("/api/health")
    assert (health.status_code, health.json()) == (200, {"status": "ok"})
    page = client.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert "<title>srtctl status-server</title>" in page.text
    head = client.head("/")
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["content-length"] == page.headers["content-length"]
    assert client.head("/api/health").headers["content-length"] == "16"


def test_create_then_get(client: httpx.Client) -> None:
    created = _create(client, "4242", cluster="lab", recipe="r.yaml", metadata={"tags": ["a"]})
    assert (created.status_code, created.json()) == (201, {"job_id": "4242", "status": "submitted"})
    doc = client.get("/api/jobs/4242").json()
    assert {k: doc[k] for k in ("job_id", "job_name", "cluster", "recipe", "status")} == {
        "job_id": "4242",
        "job_name": "name-4242",
        "cluster": "lab",
        "recipe": "r.yaml",
        "status": "submitted",
    }
    assert doc["submitted_at"] == T0
    assert doc["metadata"] == {"tags": ["a"]}
    assert doc["logs"] == [] and doc["captures"] == []
    [event] = doc["events"]
    assert set(event) == {"id", "job_id", "status", "stage", "message", "created_at"}
    assert (event["job_id"], event["status"], event["stage"], event["message"]) == (
        "4242",
        "submitted",
        None,
        None,
    )
    assert event["created_at"].endswith("Z")
    missing = client.get("/api/jobs/9999")
    assert (missing.status_code, missing.json()) == (
        404,
        {"detail": "job 9999 is not known to this collector"},
    )


def test_put_for_an_unknown_job_creates_a_placeholder(client: httpx.Client) -> None:
    named = _put(client, "7", "starting", stage="starting", metadata={"job_name": "agg"})
    assert (named.status_code, named.json()) == (200, {"job_id": "7", "status": "starting"})
    assert client.get("/api/jobs/7").json()["job_name"] == "agg"
    _put(client, "8", "workers")
    doc = client.get("/api/jobs/8").json()
    assert (doc["job_name"], doc["status"], doc["submitted_at"]) == ("job-8", "workers", None)


def test_late_post_never_rewinds_and_only_fills_identity(client: httpx.Client) -> None:
    _put(client, "5", "benchmark", stage="benchmark", metadata={"model": {"path": "/m"}})
    late = _create(
        client,
        "5",
        cluster="lab",
        metadata={"model": {"path": "/other", "container": "img"}, "tags": ["x"]},
    )
    assert (late.status_code, late.json()) == (201, {"job_id": "5", "status": "benchmark"})
    doc = client.get("/api/jobs/5").json()
    assert (doc["status"], doc["stage"], doc["job_name"], doc["cluster"]) == (
        "benchmark",
        "benchmark",
        "name-5",
        "lab",
    )
    assert doc["metadata"] == {"model": {"path": "/m", "container": "img"}, "tags": ["x"]}
    earlier = {"job_id": "5", "job_name": "renamed", "submitted_at": "2026-11-29T14:00:00+00:00"}
    client.post("/api/jobs", json=earlier)
    later = {"job_id": "5", "job_name": "renamed", "submitted_at": "2026-11-29T16:00:00Z"}
    client.post("/api/jobs", json=later)
    doc = client.get("/api/jobs/5").json()
    assert (doc["submitted_at"], doc["job_name"]) == ("2026-11-29T14:00:00+00:00", "name-5")
    assert _events(client, "5") == [("benchmark", "benchmark", None)]


def test_events_are_deduplicated_and_fields_merged(client: httpx.Client) -> None:
    _create(client, "1")
    _put(client, "1", "starting", stage="starting", message="Job started on node-01")
    _put(client, "1", "starting", stage="starting", message="Job started on node-01")
    _put(client, "1", "starting", stage="head_infrastructure", message="Starting head")
    _put(client, "1", "starting", stage="head_infrastructure", message="Starting head")
    _put(client, "1", "workers", stage="workers", message="Starting workers")
    assert _events(client, "1") == [
        ("submitted", None, None),
        ("starting", "starting", "Job started on node-01"),
        ("starting", "head_infrastructure", "Starting head"),
        ("workers", "workers", "Starting workers"),
    ]
    _put(client, "1", "benchmark", metadata={"a": {"x": 1}}, artifacts={"s3": "s3://b/1"})
    _put(
        client,
        "1",
        "benchmark",
        metadata={"a": {"y": 2}},
        artifacts={"dashboard": "d.html"},
        benchmark_results={"c4": 1.0},
    )
    _put(client, "1", "completed", exit_code=0, benchmark_results={"c16": 2.0})
    doc = client.get("/api/jobs/1").json()
    assert doc["metadata"] == {"a": {"x": 1, "y": 2}}
    assert doc["artifacts"] == {"s3": "s3://b/1", "dashboard": "d.html"}
    assert doc["benchmark_results"] == {"c16": 2.0}
    assert (doc["status"], doc["exit_code"], doc["stage"]) == ("completed", 0, "workers")


def test_list_pagination_filters_and_limits(client: httpx.Client) -> None:
    for n in range(1, 8):
        _create(client, str(n), cluster="a" if n % 2 else "b")
    _put(client, "3", "failed")
    first = client.get("/api/jobs", params={"per_page": 3}).json()
    assert [j["job_id"] for j in first["jobs"]] == ["7", "6", "5"]
    assert (first["total"], first["page"], first["per_page"]) == (7, 1, 3)
    third = client.get("/api/jobs", params={"per_page": 3, "page": 3}).json()
    assert [j["job_id"] for j in third["jobs"]] == ["1"]
    beyond = client.get("/api/jobs", params={"per_page": 3, "page": 9}).json()
    assert (beyond["jobs"], beyond["total"]) == ([], 7)
    default = client.get("/api/jobs").json()
    assert (default["per_page"], len(default["jobs"])) == (50, 7)
    assert set(default["jobs"][0]) == {
        "job_id",
        "job_name",
        "cluster",
        "status",
        "stage",
        "message",
        "submitted_at",
        "started_at",
        "completed_at",
        "updated_at",
        "exit_code",
        "logs_url",
        "created_at",
        "verdict",
        "diagnosis",
    }
    failed = client.get("/api/jobs", params={"status": "failed"}).json()
    assert ([j["job_id"] for j in failed["jobs"]], failed["total"]) == (["3"], 1)
    on_b = client.get("/api/jobs", params={"cluster": "b", "status": "submitted"}).json()
    assert [j["job_id"] for j in on_b["jobs"]] == ["6", "4", "2"]
    assert client.get("/api/jobs", params={"per_page": 100}).status_code == 200
    for params, detail in (
        ({"per_page": "101"}, "query parameter per_page='101': expected an integer from 1 to 100"),
        ({"per_page": "0"}, "query parameter per_page='0': expected an integer from 1 to 100"),
        ({"page": "0"}, "query parameter page='0': expected an integer from 1"),
        ({"page": "x"}, "query parameter page='x': expected an integer from 1"),
        (
            {"status": "running"},
            "query parameter status='running' is not allowed; one of submitted, starting, "
            "workers, frontend, benchmark, completed, failed, timeout",
        ),
        (
            {"per-page": "5"},
            "unknown query parameter 'per-page'; allowed: page, per_page, status, cluster",
        ),
    ):
        bad = client.get("/api/jobs", params=params)
        assert (bad.status_code, bad.json()) == (422, {"detail": detail}), params


def test_job_events_cursor_and_global_feed(client: httpx.Client) -> None:
    _create(client, "1")
    _create(client, "2")
    for stage in ("starting", "workers", "frontend"):
        _put(client, "1", "starting", stage=stage)
    page = client.get("/api/jobs/1/events", params={"limit": 2}).json()
    assert [e["stage"] for e in page["events"]] == [None, "starting"]
    assert page["job_id"] == "1"
    assert page["next_cursor"] == page["events"][-1]["id"]
    rest = client.get("/api/jobs/1/events", params={"after": page["next_cursor"]}).json()
    assert [e["stage"] for e in rest["events"]] == ["workers", "frontend"]
    done = client.get("/api/jobs/1/events", params={"after": rest["next_cursor"]}).json()
    assert (done["events"], done["next_cursor"]) == ([], rest["next_cursor"])
    feed = client.get("/api/events").json()
    assert [(e["job_id"], e["stage"]) for e in feed["events"]] == [
        ("1", None),
        ("2", None),
        ("1", "starting"),
        ("1", "workers"),
        ("1", "frontend"),
    ]
    only_2 = client.get("/api/events", params={"job_id": "2"}).json()
    assert [e["job_id"] for e in only_2["events"]] == ["2"]
    after = client.get("/api/events", params={"after": feed["events"][2]["id"], "limit": 1})
    assert [e["stage"] for e in after.json()["events"]] == ["workers"]
    assert client.get("/api/jobs/1/events", params={"limit": 1000}).status_code == 200
    too_many = client.get("/api/jobs/1/events", params={"limit": 1001})
    assert (too_many.status_code, too_many.json()) == (
        422,
        {"detail": "query parameter limit='1001': expected an integer from 1 to 1000"},
    )
    assert client.get("/api/events", params={"limit": 1001}).status_code == 422
    unknown = client.get("/api/jobs/3/events")
    assert (unknown.status_code, unknown.json()) == (
        404,
        {"detail": "job 3 is not known to this collector"},
    )


def test_delete(client: httpx.Client, collector: Collector) -> None:
    _create(client, "1")
    client.post("/api/jobs/1/logs", params={"file": "a.out", "offset": 0}, content=b"x")
    assert (collector.uploads_root / "1" / "logs" / "a.out").is_file()
    gone = client.delete("/api/jobs/1")
    assert (gone.status_code, gone.json()) == (200, {"deleted": True, "job_id": "1"})
    assert client.get("/api/jobs/1").status_code == 404
    assert client.get("/api/events").json()["events"] == []
    assert not (collector.uploads_root / "1").exists()
    again = client.delete("/api/jobs/1")
    assert (again.status_code, again.json()) == (
        404,
        {"detail": "job 1 is not known to this collector"},
    )


def test_unknown_routes_and_methods(client: httpx.Client) -> None:
    nothing = client.get("/api/nothing")
    assert (nothing.status_code, nothing.json()) == (
        404,
        {"detail": "no route '/api/nothing'; the routes are listed at GET /"},
    )
    assert client.get("/api/jobs/").status_code == 404
    wrong = client.patch("/api/jobs/1")
    assert (wrong.status_code, wrong.json(), wrong.headers["allow"]) == (
        405,
        {"detail": "PATCH is not served on /api/jobs/1; allowed: DELETE, GET, HEAD, PUT"},
        "DELETE, GET, HEAD, PUT",
    )
    bad_id = client.get("/api/jobs/a%20b")
    assert (bad_id.status_code, bad_id.json()) == (
        422,
        {
            "detail": "job id 'a%20b' is not a job id: use 1-128 letters, digits, '.', '_', '+' "
            "or '-', starting with a letter or digit"
        },
    )


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (
            {"status": "running", "updated_at": T1},
            "Invalid enum value 'running' - at `$.status`; one of submitted, starting, workers, "
            "frontend, benchmark, completed, failed, timeout",
        ),
        (
            {"status": "workers", "stage": "serving", "updated_at": T1},
            "Invalid enum value 'serving' - at `$.stage`; one of starting, head_infrastructure, "
            "preflight, workers, frontend, benchmark, cleanup",
        ),
        ({"status": "workers"}, "Object missing required field `updated_at`"),
        (
            {"status": "workers", "updated_at": T1, "colour": "red"},
            "Object contains unknown field `colour`; allowed: status, updated_at, stage, message, "
            "started_at, completed_at, exit_code, logs_url, metadata, report, artifacts, "
            "benchmark_results",
        ),
        (
            {"status": "workers", "updated_at": "yesterday"},
            "$.updated_at: 'yesterday' is not an ISO-8601 time with a time zone "
            "(e.g. 2026-11-29T15:12:09Z)",
        ),
        (
            {"status": "workers", "updated_at": "2026-11-29T15:00:00"},
            "$.updated_at: '2026-11-29T15:00:00' is not an ISO-8601 time with a time zone "
            "(e.g. 2026-11-29T15:12:09Z)",
        ),
        (
            {"status": "completed", "updated_at": T1, "exit_code": "0"},
            "Expected `int | null`, got `str` - at `$.exit_code`",
        ),
        (
            {"status": "completed", "updated_at": T1, "exit_code": 2**63},
            "$.exit_code: 9223372036854775808 is not a 64-bit integer",
        ),
        (
            {"status": "completed", "updated_at": T1, "metadata": [1]},
            "Expected `object | null`, got `array` - at `$.metadata`",
        ),
        ([1, 2], "the body is a JSON list, not an object"),
    ],
)
def test_put_validation_is_422(client: httpx.Client, body: object, detail: str) -> None:
    answer = client.put("/api/jobs/1", json=body)
    assert (answer.status_code, answer.json()) == (422, {"detail": detail})
    assert client.get("/api/jobs/1").status_code == 404


def test_post_validation_is_422(client: httpx.Client) -> None:
    not_json = client.post("/api/jobs", content=b"{nope")
    assert not_json.status_code == 422
    assert not_json.json()["detail"].startswith("the body is not JSON: ")
    no_name = client.post("/api/jobs", json={"job_id": "1", "submitted_at": T0})
    assert no_name.json() == {"detail": "Object missing required field `job_name`"}
    bad_id = client.post("/api/jobs", json={"job_id": "../x", "job_name": "n", "submitted_at": T0})
    assert (bad_id.status_code, bad_id.json()) == (
        422,
        {
            "detail": "$.job_id: '../x' is not a job id: use 1-128 letters, digits, '.', '_', "
            "'+' or '-', starting with a letter or digit"
        },
    )


def test_body_over_1_mib_is_413_before_it_is_read(collector: Collector) -> None:
    head = (
        "PUT /api/jobs/1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {MAX_BODY + 1}"
    )
    # Only the headers are sent: the answer comes without the server waiting for the body.
    status, headers, body = raw_request(collector.port, head)
    assert status == 413
    assert headers["connection"] == "close"
    assert json.loads(body) == {
        "detail": "the body is 1048577 bytes; the collector accepts at most 1048576 (send log "
        "chunks of at most 1 MiB)"
    }
    with httpx.Client(base_url=collector.url, timeout=5.0) as client:
        big = client.post(
            "/api/jobs/1/logs", params={"file": "a.out", "offset": 0}, content=b"x" * (MAX_BODY + 1)
        )
        assert big.status_code == 413
        exact = client.post(
            "/api/jobs/1/logs", params={"file": "a.out", "offset": 0}, content=b"x" * MAX_BODY
        )
        assert (exact.status_code, exact.json()) == (200, {"job_id": "1", "stored": 1})
    assert (collector.uploads_root / "1" / "logs" / "a.out").stat().st_size == MAX_BODY
    chunked = raw_request(
        collector.port,
        "POST /api/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked",
        b"0\r\n\r\n",
    )
    assert (chunked[0], json.loads(chunked[2])) == (
        411,
        {"detail": "send the body with a Content-Length (chunked bodies are refused)"},
    )


def test_requests_are_logged_through_the_callable(tmp_path: Path) -> None:
    lines: list[str] = []
    with serving(settings(tmp_path), log=lines) as running:
        httpx.get(f"{running.url}/api/health", timeout=5.0)
    assert lines == ['127.0.0.1 "GET /api/health HTTP/1.1" 200 -']


# -- auth ------------------------------------------------------------------------------------


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[Collector]:
    with serving(settings(tmp_path, write=WRITE, read=READ)) as running:
        yield running


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_write_and_read_tokens(guarded: Collector) -> None:
    with httpx.Client(base_url=guarded.url, timeout=5.0) as client:
        assert client.get("/api/health").status_code == 200
        assert client.get("/").status_code == 200
        assert client.head("/").status_code == 200
        missing = client.get("/api/jobs")
        assert (missing.status_code, missing.json(), missing.headers["www-authenticate"]) == (
            401,
            {"detail": "this collector needs Authorization: Bearer <token>"},
            "Bearer",
        )
        wrong = client.get("/api/jobs", headers=_bearer("guess"))
        assert (wrong.status_code, wrong.json(), wrong.headers["www-authenticate"]) == (
            401,
            {"detail": "the bearer token is not valid for this collector"},
            "Bearer",
        )
        basic = client.get("/api/jobs", headers={"Authorization": f"Basic {WRITE}"})
        assert basic.status_code == 401
        body = {"job_id": "1", "job_name": "n", "submitted_at": T0}
        assert client.post("/api/jobs", json=body, headers=_bearer(WRITE)).status_code == 201
        put = {"status": "workers", "updated_at": T1}
        assert client.put("/api/jobs/1", json=put, headers=_bearer(WRITE)).status_code == 200
        assert client.get("/api/jobs/1", headers=_bearer(WRITE)).status_code == 200
        assert client.get("/api/jobs/1", headers=_bearer(READ)).status_code == 200
        assert client.head("/api/jobs/1", headers=_bearer(READ)).status_code == 200
        assert client.get("/api/events", headers=_bearer(READ)).status_code == 200
        for method, path in (
            ("PUT", "/api/jobs/1"),
            ("POST", "/api/jobs"),
            ("DELETE", "/api/jobs/1"),
            ("POST", "/api/jobs/1/logs?file=a.out&offset=0"),
            ("POST", "/api/jobs/1/captures?file=out-0.parquet&offset=0&total=1"),
        ):
            refused = client.request(method, path, headers=_bearer(READ), content=b"{}")
            assert (refused.status_code, refused.json()) == (
                403,
                {"detail": f"the read token may only GET and HEAD; {method} needs the write token"},
            ), path
            assert client.request(method, path, content=b"{}").status_code == 401
        assert client.get("/api/jobs/1", headers=_bearer(WRITE)).json()["status"] == "workers"


def test_auth_comes_before_body_and_routing(guarded: Collector) -> None:
    with httpx.Client(base_url=guarded.url, timeout=5.0) as client:
        assert client.put("/api/jobs/1", content=b"{nope").status_code == 401
        assert client.get("/api/nowhere").status_code == 401
        assert client.put("/api/jobs/..", content=b"{}").status_code == 401
    head = f"PUT /api/jobs/1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {MAX_BODY + 1}"
    assert raw_request(guarded.port, head)[0] == 401


def test_without_a_write_token_nothing_is_checked(client: httpx.Client) -> None:
    assert client.get("/api/jobs", headers=_bearer("anything")).status_code == 200
    assert _put(client, "1", "workers").status_code == 200


# -- CORS ------------------------------------------------------------------------------------


def test_cors_for_listed_origins_reads_only(tmp_path: Path) -> None:
    config = settings(tmp_path, write=WRITE, read=READ, cors_origins=(ORIGIN + "/",))
    with serving(config) as running, httpx.Client(base_url=running.url, timeout=5.0) as client:
        auth = {**_bearer(READ), "Origin": ORIGIN}
        read = client.get("/api/jobs", headers=auth)
        assert read.headers["access-control-allow-origin"] == ORIGIN
        assert read.headers["vary"] == "Origin"
        assert client.head("/api/jobs", headers=auth).headers["access-control-allow-origin"] == (
            ORIGIN
        )
        denied = client.get("/api/jobs", headers={**auth, "Origin": "http://evil.example"})
        assert "access-control-allow-origin" not in denied.headers
        write = client.put(
            "/api/jobs/1",
            json={"status": "workers", "updated_at": T1},
            headers={**_bearer(WRITE), "Origin": ORIGIN},
        )
        assert write.status_code == 200
        assert "access-control-allow-origin" not in write.headers
        preflight = client.options(
            "/api/jobs",
            headers={
                "Origin": ORIGIN,
                "Access-Control-Request-Method": "GET",
                "Access-Control-Request-Headers": "authorization",
            },
        )
        assert preflight.status_code == 204
        assert {
            k: preflight.headers[k]
            for k in (
                "access-control-allow-origin",
                "access-control-allow-methods",
                "access-control-allow-headers",
            )
        } == {
            "access-control-allow-origin": ORIGIN,
            "access-control-allow-methods": "GET, HEAD, OPTIONS",
            "access-control-allow-headers": "Authorization",
        }
        put_preflight = client.options(
            "/api/jobs/1", headers={"Origin": ORIGIN, "Access-Control-Request-Method": "PUT"}
        )
        assert (put_preflight.status_code, put_preflight.json()) == (
            403,
            {"detail": "CORS: only GET and HEAD are shared with other origins, not PUT"},
        )
        assert "access-control-allow-origin" not in put_preflight.headers
        other = client.options(
            "/api/jobs",
            headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "GET"},
        )
        assert (other.status_code, other.json()) == (
            403,
            {
                "detail": "CORS: origin 'http://evil.example' is not allowed; start the "
                "collector with --cors-origin http://evil.example"
            },
        )
        plain = client.options("/api/jobs")
        assert (plain.status_code, plain.headers["allow"]) == (
            204,
            "GET, HEAD, POST, PUT, DELETE, OPTIONS",
        )


def test_cors_any_origin_and_none_configured(tmp_path: Path, client: httpx.Client) -> None:
    assert (
        "access-control-allow-origin"
        not in client.get("/api/jobs", headers={"Origin": ORIGIN}).headers
    )
    with serving(settings(tmp_path / "any", cors_origins=("*",))) as running:
        answer = httpx.get(f"{running.url}/api/jobs", headers={"Origin": ORIGIN}, timeout=5.0)
        assert answer.headers["access-control-allow-origin"] == "*"


# -- start-up rules --------------------------------------------------------------------------


def test_loopback_only_without_a_write_token(tmp_path: Path) -> None:
    with pytest.raises(CollectorConfigError) as refused:
        open_collector(settings(tmp_path, host="0.0.0.0"))
    assert str(refused.value) == (
        "--host 0.0.0.0 is not a loopback address and $SRTCTL_STATUS_TOKEN is not set: anyone "
        "who reaches the port could write jobs; set SRTCTL_STATUS_TOKEN (or name its variable "
        "with --token-env), or pass --allow-unauthenticated"
    )
    assert not (tmp_path / "state").exists()
    opened = settings(tmp_path, host="0.0.0.0", allow_unauthenticated=True)
    with serving(opened) as running:
        assert httpx.get(f"http://127.0.0.1:{running.port}/api/health", timeout=5.0).is_success
    with serving(settings(tmp_path / "tok", host="0.0.0.0", write=WRITE)) as running:
        assert running.url.startswith("http://0.0.0.0:")


def test_is_loopback() -> None:
    assert [is_loopback(h) for h in ("127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost")] == [
        True
    ] * 5
    assert [is_loopback(h) for h in ("0.0.0.0", "10.1.2.3", "::", "node-01")] == [False] * 4


def test_read_token_without_write_token_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CollectorConfigError) as refused:
        open_collector(settings(tmp_path, read=READ))
    assert str(refused.value) == (
        "$SRTCTL_STATUS_READ_TOKEN is set but $SRTCTL_STATUS_TOKEN is not: a read token needs a "
        "write token; set SRTCTL_STATUS_TOKEN (or name its variable with --token-env), or unset "
        "SRTCTL_STATUS_READ_TOKEN"
    )


def test_port_in_use(tmp_path: Path) -> None:
    sock, port = busy_port()
    try:
        with pytest.raises(CollectorStartError) as taken:
            open_collector(settings(tmp_path, port=port))
    finally:
        sock.close()
    assert str(taken.value) == (
        f"--port {port}: 127.0.0.1:{port} is already in use; stop the other server or pick "
        "another --port (0 picks a free one)"
    )


def test_database_is_reopened_with_its_jobs(tmp_path: Path) -> None:
    config = settings(tmp_path)
    with serving(config) as running:
        httpx.put(
            f"{running.url}/api/jobs/1", json={"status": "workers", "updated_at": T1}, timeout=5.0
        )
    with serving(config) as running:
        doc = httpx.get(f"{running.url}/api/jobs/1", timeout=5.0).json()
        assert doc["status"] == "workers"
    with sqlite3.connect(config.db_path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert db.execute("PRAGMA user_version").fetchone() == (2,)


def test_unusable_database_or_host(tmp_path: Path) -> None:
    folder = tmp_path / "folder.db"
    folder.mkdir()
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not sqlite at all, " * 100)
    newer = tmp_path / "newer.db"
    with sqlite3.connect(newer) as db:
        db.execute("PRAGMA user_version = 7")
    for path, detail in (
        (
            folder,
            "cannot open the status database: unable to open database file; pass --db with "
            "a writable path",
        ),
        (junk, "not a usable status database: file is not a database; pass --db with another path"),
        (
            newer,
            "not a usable status database: schema version 7, this srtctl knows version 2; "
            "pass --db with another path",
        ),
    ):
        config = dataclasses.replace(settings(tmp_path), db_path=path)
        with pytest.raises(CollectorStartError) as refused:
            open_collector(config)
        assert str(refused.value) == f"--db {path}: {detail}"
    elsewhere = settings(tmp_path, host="192.0.2.1", write=WRITE)
    with pytest.raises(CollectorStartError) as refused:
        open_collector(elsewhere)
    assert str(refused.value) == (
        "--host 192.0.2.1: not an address of this machine (Cannot assign requested address); "
        "use 127.0.0.1, 0.0.0.0 or one of this machine's addresses"
    )


def test_concurrent_writers(client: httpx.Client, collector: Collector) -> None:
    def report(worker: int) -> list[int]:
        with httpx.Client(base_url=collector.url, timeout=5.0) as own:
            return [
                _put(own, f"job{worker}", "workers", message=f"step {n}").status_code
                for n in range(20)
            ]

    with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
        codes = [code for codes in pool.map(report, range(6)) for code in codes]
    assert codes == [200] * 120
    feed = client.get("/api/events", params={"limit": 1000}).json()["events"]
    assert len(feed) == 120
    assert [e["id"] for e in feed] == sorted(e["id"] for e in feed)
    for worker in range(6):
        mine = [e["message"] for e in feed if e["job_id"] == f"job{worker}"]
        assert mine == [f"step {n}" for n in range(20)]
    assert client.get("/api/jobs").json()["total"] == 6


def test_cli_startup_errors(invoke: Invoke, tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    open_bind = invoke("status-server", "--host", "0.0.0.0", "--port", "0", "--db", db)
    assert open_bind.exit_code == 2
    assert open_bind.stderr == (
        "error: --host 0.0.0.0 is not a loopback address and $SRTCTL_STATUS_TOKEN is not set: "
        "anyone who reaches the port could write jobs; set SRTCTL_STATUS_TOKEN (or name its "
        "variable with --token-env), or pass --allow-unauthenticated\n"
    )
    read_only = invoke(
        "status-server",
        "--port",
        "0",
        "--db",
        db,
        "--read-token-env",
        "MY_READ",
        env={"MY_READ": READ},
    )
    assert read_only.exit_code == 2
    assert read_only.stderr == (
        "error: $MY_READ is set but $SRTCTL_STATUS_TOKEN is not: a read token needs a write "
        "token; set SRTCTL_STATUS_TOKEN (or name its variable with --token-env), or unset "
        "MY_READ\n"
    )
    bad_origin = invoke("status-server", "--port", "0", "--db", db, "--cors-origin", "dash")
    assert (bad_origin.exit_code, bad_origin.stderr) == (
        2,
        "error: --cors-origin 'dash' is not an origin; give scheme://host[:port] "
        "(e.g. http://localhost:3000), or * for any\n",
    )
    bad_env = invoke("status-server", "--port", "0", "--db", db, "--token-env", "MY-TOKEN")
    assert (bad_env.exit_code, bad_env.stderr) == (
        2,
        "error: --token-env 'MY-TOKEN' is not an environment variable name; name the variable "
        "that holds the token, e.g. --token-env SRTCTL_STATUS_TOKEN\n",
    )
    bad_port = invoke("status-server", "--port", "70000")
    assert bad_port.exit_code == 2
    assert "Invalid value for '--port': 70000 is not in the range 0<=x<=65535." in bad_port.stderr
    sock, port = busy_port()
    try:
        taken = invoke("status-server", "--port", str(port), "--db", db)
    finally:
        sock.close()
    assert (taken.exit_code, taken.stderr) == (
        4,
        f"error: --port {port}: 127.0.0.1:{port} is already in use; stop the other server or "
        "pick another --port (0 picks a free one)\n",
    )
    assert not Path(db).exists()


def test_cli_help(invoke: Invoke) -> None:
    result = invoke("status-server", "--help")
    assert result.exit_code == 0
    for text in ("--token-env VAR", "--cors-origin ORIGIN", "Examples:", "Exit codes:"):
        assert text in result.stdout
    assert "status-server" in invoke("--help").stdout


# -- uploads ---------------------------------------------------------------------------------


def _log(client: httpx.Client, body: bytes, **params: Any) -> httpx.Response:
    return client.post("/api/jobs/9/logs", params={"file": "w/a.out", **params}, content=body)


def test_log_upload_is_idempotent_by_offset(client: httpx.Client, collector: Collector) -> None:
    stored = collector.uploads_root / "9" / "logs" / "w" / "a.out"
    assert _log(client, b"hello ", offset=0).json() == {"job_id": "9", "stored": 1}
    assert _log(client, b"hello ", offset=0).json() == {"job_id": "9", "stored": 0}
    gap = _log(client, b"x", offset=10)
    assert (gap.status_code, gap.json()) == (
        409,
        {
            "detail": "logs file 'w/a.out' of job 9: offset 10 is past the 6 bytes stored; "
            "resend from offset 6"
        },
    )
    assert _log(client, b"world", offset=6).json() == {"job_id": "9", "stored": 1}
    assert _log(client, b"world!", offset=6).json() == {"job_id": "9", "stored": 1}
    assert stored.read_bytes() == b"hello world!"
    assert _log(client, b"", offset=12, final=1, cluster="lab").json()["stored"] == 1
    _put(client, "9", "completed")
    assert client.get("/api/jobs/9").json()["logs"] == [
        {"file": "w/a.out", "size": 12, "final": True}
    ]
    empty = client.post(
        "/api/jobs/9/logs", params={"file": "empty.err", "offset": 0, "final": 1}, content=b""
    )
    assert empty.json() == {"job_id": "9", "stored": 1}
    assert (collector.uploads_root / "9" / "logs" / "empty.err").read_bytes() == b""


@pytest.mark.parametrize(
    ("params", "status", "detail"),
    [
        (
            {"file": "/etc/passwd", "offset": 0},
            400,
            "file='/etc/passwd' must be a path relative to the job's log folder, without '..'",
        ),
        (
            {"file": "a/../../x.out", "offset": 0},
            400,
            "file='a/../../x.out' must be a path relative to the job's log folder, without '..'",
        ),
        (
            {"file": "a//b.out", "offset": 0},
            422,
            "file='a//b.out' has an empty or '.' path component or a NUL byte",
        ),
        ({"offset": 0}, 422, "query parameter 'file' is required"),
        ({"file": "a.out"}, 422, "query parameter 'offset' is required"),
        (
            {"file": "a.out", "offset": -1},
            422,
            "query parameter offset='-1': expected an integer from 0",
        ),
        (
            {"file": "a.out", "offset": 0, "final": "yes"},
            422,
            "query parameter final='yes': expected 1 (or 0)",
        ),
    ],
)
def test_log_upload_refuses_bad_parameters(
    client: httpx.Client, collector: Collector, params: dict[str, Any], status: int, detail: str
) -> None:
    answer = client.post("/api/jobs/9/logs", params=params, content=b"x")
    assert (answer.status_code, answer.json()) == (status, {"detail": detail})
    assert not (collector.uploads_root / "9").exists()


def test_log_file_clashing_with_a_folder(client: httpx.Client) -> None:
    assert _log(client, b"x", offset=0).status_code == 200
    clash = client.post("/api/jobs/9/logs", params={"file": "w", "offset": 0}, content=b"x")
    assert (clash.status_code, clash.json()) == (
        409,
        {"detail": "logs file 'w' of job 9 clashes with a stored file or folder of the same name"},
    )


def test_capture_upload(client: httpx.Client, collector: Collector) -> None:
    def send(offset: int, body: bytes, total: int = 10, name: str = "out-3.parquet") -> Any:
        params = {"file": name, "offset": offset, "total": total}
        return client.post("/api/jobs/9/captures", params=params, content=body)

    assert send(0, b"abcd").json() == {"job_id": "9", "next_offset": 4, "complete": False}
    assert send(0, b"abcd").json() == {"job_id": "9", "next_offset": 4, "complete": False}
    assert send(4, b"efghij").json() == {"job_id": "9", "next_offset": 10, "complete": True}
    assert send(4, b"efghij").json() == {"job_id": "9", "next_offset": 10, "complete": True}
    assert (collector.uploads_root / "9" / "captures" / "out-3.parquet").read_bytes() == (
        b"abcdefghij"
    )
    past = send(8, b"xyz")
    assert (past.status_code, past.json()) == (
        422,
        {"detail": "capture out-3.parquet: a chunk of 3 bytes at offset 8 ends past total=10"},
    )
    gap = send(6, b"z", total=20, name="out-4.parquet")
    assert gap.status_code == 409
    bad = send(0, b"x", name="notes.txt")
    assert (bad.status_code, bad.json()) == (
        400,
        {"detail": "file='notes.txt' is not a capture segment name (out-<N>.parquet)"},
    )
    _put(client, "9", "completed")
    assert client.get("/api/jobs/9").json()["captures"] == [
        {"file": "out-3.parquet", "size": 10, "total": 10, "complete": True}
    ]


# -- the product's own client against the server ---------------------------------------------


def test_reporter_and_streamer_agree_with_the_server(tmp_path: Path) -> None:
    from srt_runtime.reporting.status import (
        JobCreate,
        JobStage,
        JobStatus,
        JobUpdate,
        StatusReporter,
        send_job_create,
    )
    from srt_runtime.reporting.stream import LogStreamer

    warnings: list[tuple[int, str]] = []

    def log(level: int, message: str) -> None:
        warnings.append((level, message))

    log_dir = tmp_path / "job" / "logs"
    (log_dir / "sub").mkdir(parents=True)
    sweep = log_dir / "sweep_4242.log"
    sweep.write_bytes(b"".join(b"line %d\n" % n for n in range(700)))
    (log_dir / "sub" / "bench.jsonl").write_bytes(b'{"a": 1}\n')
    (log_dir / "ignored.bin").write_bytes(b"\x00")
    outbox = tmp_path / "job" / "tachometer-outbox"
    outbox.mkdir()
    segment = bytes(range(256)) * 9
    (outbox / "out-0.parquet").write_bytes(segment)

    config = settings(tmp_path, write=WRITE, read=READ)
    with serving(config) as running:
        endpoint = running.url + "/"
        created = send_job_create(
            (endpoint,),
            JobCreate(
                job_id="4242",
                job_name="mocker-agg",
                submitted_at=T0,
                cluster="lab",
                metadata={"model": {"path": "/models/q"}},
            ),
            token=WRITE,
            log=log,
        )
        assert created
        reporter = StatusReporter((endpoint,), "4242", token=WRITE, cluster="lab", log=log)
        streamer = LogStreamer(
            (endpoint,), "4242", log_dir, token=WRITE, interval=3600.0, chunk_size=1000, log=log
        )
        sequence: list[tuple[JobStatus, JobStage, str]] = [
            ("starting", "starting", "Job started on node-01"),
            ("starting", "head_infrastructure", "Starting head infrastructure"),
            ("workers", "workers", "Starting workers"),
            ("frontend", "frontend", "Starting frontend"),
            ("benchmark", "benchmark", "Running benchmark"),
        ]
        for status, stage, message in sequence:
            update = JobUpdate(status=status, stage=stage, message=message, updated_at=T1)
            assert reporter.send(update)
        assert streamer.flush()
        with sweep.open("ab") as handle:
            handle.write(b"the end\n")
        assert streamer.stop(budget=10.0)
        assert reporter.send(
            JobUpdate(
                status="completed",
                stage="cleanup",
                message="Benchmark completed successfully",
                updated_at=T1,
                exit_code=0,
            )
        )
        summary = reporter.close(timeout=10.0)
        assert (summary.events, summary.delivered, summary.dropped) == (
            6,
            {running.url: 6},
            0,
        )
        with httpx.Client(base_url=running.url, headers=_bearer(READ), timeout=5.0) as client:
            doc = client.get("/api/jobs/4242").json()
        stored = running.uploads_root / "4242"
        assert (stored / "logs" / "sweep_4242.log").read_bytes() == sweep.read_bytes()
        assert (stored / "logs" / "sub" / "bench.jsonl").read_bytes() == b'{"a": 1}\n'
        assert not (stored / "logs" / "ignored.bin").exists()
        assert (stored / "captures" / "out-0.parquet").read_bytes() == segment
    assert warnings == []
    assert not (outbox / "out-0.parquet").exists()
    assert [(e["status"], e["stage"], e["message"]) for e in doc["events"]] == [
        ("submitted", None, None),
        *sequence,
        ("completed", "cleanup", "Benchmark completed successfully"),
    ]
    assert (doc["job_name"], doc["cluster"], doc["status"], doc["exit_code"]) == (
        "mocker-agg",
        "lab",
        "completed",
        0,
    )
    assert doc["metadata"] == {"model": {"path": "/models/q"}, "cluster": "lab"}
    assert doc["logs"] == [
        {"file": "sub/bench.jsonl", "size": 9, "final": True},
        {"file": "sweep_4242.log", "size": sweep.stat().st_size, "final": True},
    ]
    assert doc["captures"] == [
        {"file": "out-0.parquet", "size": len(segment), "total": len(segment), "complete": True}
    ]


# -- the real command ------------------------------------------------------------------------

SRTCTL = shutil.which("srtctl", path=str(Path(sys.executable).parent)) or "srtctl"


def _first_line(proc: subprocess.Popen[str], seconds: float) -> str:
    assert proc.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        ready = selector.select(timeout=seconds)
    assert ready, f"no start-up line within {seconds}s"
    return proc.stdout.readline()


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_real_status_server_process(tmp_path: Path, stop: signal.Signals) -> None:
    db = tmp_path / "db" / "status.db"
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "SRTCTL_STATUS_TOKEN": WRITE,
    }
    proc = subprocess.Popen(
        [SRTCTL, "status-server", "--port", "0", "--db", str(db)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = _first_line(proc, 30.0)
        prefix = "srtctl status-server: listening on http://127.0.0.1:"
        assert line.startswith(prefix), line
        port = line[len(prefix) :].split(",")[0]
        assert line == (f"{prefix}{port}, db {db}, auth on (write token $SRTCTL_STATUS_TOKEN)\n")
        url = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{url}/api/health", timeout=5.0).json() == {"status": "ok"}
        put = httpx.put(
            f"{url}/api/jobs/1",
            json={"status": "workers", "updated_at": T1},
            headers=_bearer(WRITE),
            timeout=5.0,
        )
        assert put.json() == {"job_id": "1", "status": "workers"}
        assert httpx.get(f"{url}/api/jobs/1", timeout=5.0).status_code == 401
        proc.send_signal(stop)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert out == ""
    assert err.splitlines()[-1] == "srtctl status-server: stopped"
    assert "Traceback" not in err
    assert db.is_file()
