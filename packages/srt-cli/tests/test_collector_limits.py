"""Issue 32 item 5: the collector without a token answers only requests addressed to it (DNS
rebinding), a request that does not arrive whole in time is 408, and connections are capped.

Real collectors on 127.0.0.1 (port 0), real sockets. The deadline is set short
(``request_timeout``); the waits below are hang guards, generous multiples of it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import socket
import time
from pathlib import Path

import httpx
import pytest
from collector_testkit import raw_request, serving, settings

from srt_cli.collector.rebinding import host_name

T0 = "2026-01-01T00:00:00Z"
JOB = {"job_id": "1", "job_name": "n", "submitted_at": T0}


def _post(url: str, **headers: str) -> httpx.Response:
    return httpx.post(f"{url}/api/jobs", json=JOB, headers=headers, timeout=5)


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("Host", "evil.example"),
        ("Host", "evil.example:8080"),
        ("Origin", "http://evil.example"),
        ("Origin", "http://evil.example:8080"),
    ],
)
def test_a_tokenless_collector_refuses_a_foreign_host_or_origin(
    tmp_path: Path, header: str, value: str
) -> None:
    with serving(settings(tmp_path)) as collector:
        refused = _post(collector.url, **{header: value})
        assert refused.status_code == 403, refused.text
        assert f"{header} '{value}'" in refused.json()["detail"]
        # nothing was written
        assert httpx.get(f"{collector.url}/api/jobs", timeout=5).json()["jobs"] == []
        # reads from a foreign page are refused too (they would leak the jobs)
        read = httpx.get(f"{collector.url}/api/jobs", headers={header: value}, timeout=5)
        assert read.status_code == 403


def test_loopback_and_configured_names_are_answered(tmp_path: Path) -> None:
    config = dataclasses.replace(
        settings(tmp_path, cors_origins=("http://dash.example",)),
        allowed_hosts=("collector.lan",),
    )
    with serving(config) as collector:
        port = collector.port
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "collector.lan", f"[::1]:{port}"):
            assert _post(collector.url, Host=host).status_code in (200, 201, 409), host
        for origin in ("http://dash.example", f"http://localhost:{port}"):
            assert _post(collector.url, Origin=origin).status_code in (200, 201, 409), origin


def test_with_a_token_the_token_decides(tmp_path: Path) -> None:
    with serving(settings(tmp_path, write="w-token")) as collector:
        answer = _post(collector.url, Host="evil.example", Authorization="Bearer w-token")
        assert answer.status_code == 201, answer.text


def test_host_name_strips_the_port() -> None:
    assert host_name("[::1]:80") == "::1"
    assert host_name("Example.COM:80") == "example.com"
    assert host_name("127.0.0.1") == "127.0.0.1"


def test_a_body_that_never_completes_is_408(tmp_path: Path) -> None:
    config = dataclasses.replace(settings(tmp_path), request_timeout=0.5)
    with serving(config) as collector:
        head = (
            "POST /api/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Content-Length: 100"
        )
        # 10 of 100 bytes, then nothing: the answer comes at the deadline
        status, headers, body = raw_request(collector.port, head, b'{"job_id":')
        assert status == 408
        assert headers["connection"] == "close"
        assert json.loads(body) == {"detail": "the request did not arrive within 0.5 s"}


def test_slow_trickle_connections_are_closed_at_the_deadline(tmp_path: Path) -> None:
    config = dataclasses.replace(settings(tmp_path), request_timeout=0.5)
    with serving(config) as collector:
        socks = [socket.create_connection(("127.0.0.1", collector.port)) for _ in range(20)]
        try:
            for sock in socks:
                sock.settimeout(10)  # hang guard: 20 x the deadline
                sock.sendall(b"GET /api/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a")
            # each keeps trickling one byte at a time until it sees the end of the connection
            answers = []
            for sock in socks:
                data = b""
                while True:
                    with contextlib.suppress(OSError):
                        sock.sendall(b"a")
                    try:
                        got = sock.recv(4096)
                    except TimeoutError:
                        pytest.fail("a trickling connection was still open 20 deadlines later")
                    if not got:
                        break
                    data += got
                answers.append(data.split(b"\r\n", 1)[0])
        finally:
            for sock in socks:
                sock.close()
        assert set(answers) == {b"HTTP/1.1 408 Request Timeout"}


def test_an_idle_keep_alive_connection_is_closed_without_an_answer(tmp_path: Path) -> None:
    config = dataclasses.replace(settings(tmp_path), request_timeout=0.3)
    with (
        serving(config) as collector,
        socket.create_connection(("127.0.0.1", collector.port)) as sock,
    ):
        sock.settimeout(10)  # hang guard
        assert sock.recv(4096) == b""


def test_connections_over_the_cap_are_503(tmp_path: Path) -> None:
    config = dataclasses.replace(settings(tmp_path), max_connections=3, request_timeout=30)
    with serving(config) as collector:
        held = [socket.create_connection(("127.0.0.1", collector.port)) for _ in range(3)]
        try:
            deadline = time.monotonic() + 10  # hang guard: the server accepts them in turn
            answer = b""
            while time.monotonic() < deadline:
                with socket.create_connection(("127.0.0.1", collector.port), timeout=5) as extra:
                    extra.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                    answer = extra.recv(4096)
                if answer.startswith(b"HTTP/1.1 503"):
                    break
                time.sleep(0.05)
            assert answer.startswith(b"HTTP/1.1 503"), answer
            assert b"too many open connections" in answer
        finally:
            for sock in held:
                sock.close()
        # once they are gone, requests are served again
        deadline = time.monotonic() + 10  # hang guard
        while time.monotonic() < deadline:
            if httpx.get(f"{collector.url}/api/health", timeout=5).status_code == 200:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the collector did not serve again after the connections closed")
