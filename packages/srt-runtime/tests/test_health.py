"""Health gate parsers (pure) and one attempt per family against a real HTTP server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import msgspec
import pytest

from srt_planner.plan import HealthGate
from srt_runtime.health import Counts, check_health, parse_dynamo_health, parse_router_workers


def test_dynamo_counts_generate_endpoints_by_component() -> None:
    body = {
        "instances": [
            {"component": "prefill", "endpoint": "generate"},
            {"component": "prefill", "endpoint": "clear_kv_blocks"},
            {"component": "decode", "endpoint": "generate"},
            {"component": "tensorrt_llm", "endpoint": "generate"},
            {"component": "backend", "endpoint": "generate"},
            {"component": "router", "endpoint": "generate"},
            "junk",
        ]
    }
    assert parse_dynamo_health(body) == Counts(prefill=1, decode=3)
    assert parse_dynamo_health({"status": "healthy"}) is None
    assert parse_dynamo_health([1]) is None


def test_router_counts_from_stats() -> None:
    body = {"stats": {"prefill_count": 2, "decode_count": 1, "regular_count": 3}}
    assert parse_router_workers(body) == Counts(prefill=2, decode=4)
    assert parse_router_workers({"stats": {"decode_count": "x"}}) == Counts(0, 0)
    assert parse_router_workers({"workers": []}) is None


Routes = dict[str, tuple[int, Any]]


@pytest.fixture
def server() -> Iterator[tuple[str, Routes]]:
    routes: Routes = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, body = routes.get(self.path, (404, {}))
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", routes
    httpd.shutdown()
    httpd.server_close()


def _gate(family: Any, url: str, prefill: int = 0, decode: int = 0) -> HealthGate:
    return HealthGate(family=family, url=url, expected_prefill=prefill, expected_decode=decode)


def test_dynamo_gate(server: tuple[str, Routes]) -> None:
    url, routes = server
    gate = _gate("dynamo", url + "/health", prefill=1, decode=1)
    with httpx.Client() as client:
        routes["/health"] = (200, {"instances": [{"component": "prefill", "endpoint": "generate"}]})
        assert check_health(gate, client) == (
            False,
            "Model is not ready, waiting for 1 "
            "prefills and 1 decodes. Have 1 prefills and 0 "
            "decodes.",
        )
        routes["/health"] = (
            200,
            {
                "instances": [
                    {"component": "prefill", "endpoint": "generate"},
                    {"component": "decode", "endpoint": "generate"},
                ]
            },
        )
        # Every worker registered, but the frontend lists no model yet: not ready.
        routes["/v1/models"] = (200, {"data": []})
        assert check_health(gate, client) == (False, f"{url}/v1/models answered 200 with no model")
        routes["/v1/models"] = (200, {"data": [{"id": "m"}]})
        assert check_health(gate, client)[0] is True
        routes["/health"] = (503, {"instances": []})
        assert check_health(gate, client) == (
            False,
            f"{url}/health answered 503 without worker counts",
        )


def test_router_gate(server: tuple[str, Routes]) -> None:
    url, routes = server
    gate = _gate("router", url + "/workers", decode=2)
    routes["/workers"] = (200, {"stats": {"regular_count": 2}})
    with httpx.Client() as client:
        assert check_health(gate, client)[0] is True


def test_direct_gate_needs_health_and_a_model(server: tuple[str, Routes]) -> None:
    url, routes = server
    gate = _gate("direct", url + "/health")
    with httpx.Client() as client:
        assert check_health(gate, client) == (False, f"{url}/health answered 404")
        routes["/health"] = (200, b"")
        routes["/v1/models"] = (200, {"data": []})
        assert check_health(gate, client) == (False, f"{url}/v1/models answered 200 with no model")
        routes["/v1/models"] = (200, {"data": [{"id": "m"}]})
        assert check_health(gate, client)[0] is True


def test_the_gate_waits_for_the_served_name_not_any_model(server: tuple[str, Routes]) -> None:
    """A worker serving another name than the plan's would 404 every benchmark request."""
    url, routes = server
    gate = msgspec.structs.replace(_gate("direct", url + "/health"), model="Org/x")
    routes["/health"] = (200, b"")
    routes["/v1/models"] = (200, {"data": [{"id": "x"}]})
    with httpx.Client() as client:
        assert check_health(gate, client) == (
            False,
            f"{url}/v1/models lists ['x'], not the served name 'Org/x'",
        )
        routes["/v1/models"] = (200, {"data": [{"id": "x"}, {"id": "Org/x"}]})
        assert check_health(gate, client) == (True, f"{url}/v1/models lists ['x', 'Org/x']")


def test_trtllm_serve_gate_and_an_unreachable_server(server: tuple[str, Routes]) -> None:
    url, routes = server
    routes["/health"] = (200, b"")
    with httpx.Client() as client:
        assert check_health(_gate("trtllm_serve", url + "/health"), client)[0] is True
        dead = _gate("trtllm_serve", "http://127.0.0.1:1/health")
        assert check_health(dead, client) == (
            False,
            "http://127.0.0.1:1/health not reachable (ConnectError)",
        )
