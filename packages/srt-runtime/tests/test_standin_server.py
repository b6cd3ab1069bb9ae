"""The stand-in server over real sockets (in this process): HTTP/1.1, streams, timing, live
metrics, roles, the request log and the extra ports."""

from __future__ import annotations

import asyncio
import io
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from srt_runtime.standin.config import StandinConfig
from srt_runtime.standin.server import serve


@contextmanager
def running(**kw: Any) -> Iterator[str]:
    """A stand-in on a free port of 127.0.0.1, served from a background thread; its URL."""
    fields: dict[str, Any] = {"host": "127.0.0.1", "port": 0, "served_model_name": "M"}
    fields.setdefault("engine", "sglang")
    config = StandinConfig(**(fields | kw))
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    stop = asyncio.Event()
    out = io.StringIO()
    done = asyncio.run_coroutine_threadsafe(serve(config, stop=stop, out=out), loop)
    try:
        deadline = time.monotonic() + 60
        while "stand-in for" not in out.getvalue() and not done.done():
            # hang guard: 60 s for an in-process start of milliseconds
            assert time.monotonic() < deadline, "the stand-in did not start"
            time.sleep(0.01)
        if done.done():
            done.result()  # raises what stopped it
        port = int(out.getvalue().split(" on :", 1)[1].split()[0])
        yield f"http://127.0.0.1:{port}"
    finally:
        loop.call_soon_threadsafe(stop.set)
        if not done.done() or done.exception() is None:
            done.result(timeout=5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        loop.close()


def _sse(text: str) -> list[Any]:
    events = [e for e in text.split("\n\n") if e]
    assert all(e.startswith("data: ") for e in events), events
    return [e[6:] if e == "data: [DONE]" else msgspec.json.decode(e[6:]) for e in events]


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def _raw(url: str, data: bytes, *, until: bytes = b"", timeout: float = 5.0) -> bytes:
    """Send ``data`` on a new connection; read until ``until`` is seen or the server closes."""
    with socket.create_connection(("127.0.0.1", _port(url)), timeout=timeout) as sock:
        sock.sendall(data)
        got = b""
        while not (until and until in got):
            part = sock.recv(65536)
            if not part:
                break
            got += part
        return got


def test_health_info_metrics_and_unknown_paths() -> None:
    with running(engine="sglang", role="decode") as url, httpx.Client(base_url=url) as client:
        for path in ("/health", "/health_generate"):
            assert client.get(path).status_code == 200
        assert client.get("/v1/models").json()["data"][0]["id"] == "M"
        assert client.get("/get_server_info").json()["disaggregation_mode"] == "decode"
        assert client.get("/server_info").json()["disaggregation_mode"] == "decode"
        assert client.get("/get_model_info").json()["model_path"] == "M"
        metrics = client.get("/metrics")
        assert metrics.headers["content-type"].startswith("text/plain")
        assert 'sglang:num_running_reqs{model_name="M"} 0' in metrics.text
        assert client.get("/nope").status_code == 404
        assert client.get("/v1/completions").status_code == 405
        assert client.post("/flush_cache", json={}).status_code == 200
        # no capture running, no output folder: the profiler refuses, like SGLang's
        assert client.post("/stop_profile", json={}).status_code == 400
        assert client.post("/engine/start_profile", json={}).status_code == 400


def test_profiler_captures_the_asked_steps_and_writes_a_trace(tmp_path: Path) -> None:
    out = tmp_path / "profiles" / "decode"
    body = {"output_dir": str(out), "start_step": 1, "num_steps": 2, "activities": ["CPU", "GPU"]}
    with running(engine="sglang", role="decode") as url, httpx.Client(base_url=url) as client:
        client.post("/v1/completions", json={"prompt": "a"})  # before the capture: not counted
        assert client.post("/start_profile", json=body).status_code == 200
        again = client.post("/engine/start_profile", json=body)
        assert (again.status_code, again.json()) == (
            400,
            {"error": "profiling is already in progress"},
        )
        for _ in range(4):
            client.post("/v1/completions", json={"prompt": "a"})
        # num_steps reached after the 3rd generation: the capture ended on its own
        assert client.post("/stop_profile").status_code == 400
        assert (
            client.post("/engine/start_profile", json={"output_dir": str(out)}).status_code == 200
        )
        client.post("/v1/completions", json={"prompt": "a"})
        stopped = client.post("/engine/stop_profile", json={})
        assert stopped.status_code == 200
    first, second = sorted(out.glob("standin-decode-*.trace.json"))
    one = msgspec.json.decode(first.read_bytes())
    assert (one["request"], one["ended_by"], one["captured_steps"]) == (body, "num_steps", [1, 2])
    two = msgspec.json.decode(second.read_bytes())
    assert (two["ended_by"], two["captured_steps"]) == ("stop_profile", [0])
    assert stopped.json()["trace"] == str(second)
    assert one["started_at"] <= one["ended_at"] <= two["started_at"]


def test_streaming_and_whole_completions_count_tokens() -> None:
    with running(max_tokens_default=5) as url, httpx.Client(base_url=url) as client:
        body = {"prompt": "a b c", "stream": True, "stream_options": {"include_usage": True}}
        events = _sse(client.post("/v1/completions", json=body).text)
        text = "".join(e["choices"][0]["text"] for e in events[:-2])
        assert text.split() == ["w0", "w1", "w2", "w3", "w4"]
        assert events[-2]["usage"] == {
            "prompt_tokens": 3,
            "completion_tokens": 5,
            "total_tokens": 8,
        }
        assert events[-1] == "[DONE]"
        chat = client.post(
            "/v1/chat/completions",
            json={"messages": [{"role": "user", "content": "x y"}], "max_completion_tokens": 3},
        ).json()
        assert chat["choices"][0]["message"]["content"] == " w0 w1 w2"
        assert chat["usage"] == {"prompt_tokens": 2, "completion_tokens": 3, "total_tokens": 5}
        native = client.post(
            "/generate", json={"text": "a", "sampling_params": {"max_new_tokens": 2}}
        )
        assert native.json()["meta_info"]["completion_tokens"] == 2
        tokenized = client.post("/tokenize", json={"prompt": "w1 w2 x"}).json()
        assert (tokenized["count"], tokenized["tokens"]) == (3, [4, 5, 0])


def test_a_large_stream_arrives_whole() -> None:
    with running() as url, httpx.Client(base_url=url) as client:
        body = {"prompt": "a", "max_tokens": 5000, "stream": True}
        events = _sse(client.post("/v1/completions", json=body).text)
        assert len(events) == 5001
        assert events[4999]["choices"][0]["text"] == " w999"


def test_keep_alive_serves_pipelined_requests_and_close_ends_the_connection() -> None:
    with running() as url:
        get = b"GET /health HTTP/1.1\r\nhost: x\r\n\r\n"
        close = b"GET /v1/models HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"
        got = _raw(url, get + get + close)  # returns only because the server closed
        assert got.count(b"HTTP/1.1 200 OK") == 3
        assert got.endswith(b'"max_model_len":32768}]}')


def test_chunked_request_bodies_and_expect_continue() -> None:
    with running() as url:
        body = b'{"prompt": "a b", "max_tokens": 2}'
        request = (
            b"POST /v1/completions HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n"
            b"expect: 100-continue\r\nconnection: close\r\n\r\n"
            + b"%x\r\n%s\r\n" % (5, body[:5])
            + b"%x\r\n%s\r\n0\r\n\r\n" % (len(body) - 5, body[5:])
        )
        got = _raw(url, request)
        assert got.startswith(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n")
        answer = msgspec.json.decode(got.split(b"\r\n\r\n")[-1])
        assert answer["usage"]["completion_tokens"] == 2


def test_malformed_requests_get_400() -> None:
    with running() as url, httpx.Client(base_url=url) as client:
        bad = client.post("/v1/completions", content=b"{not json")
        assert bad.status_code == 400
        assert bad.json()["error"]["message"].startswith("invalid request body: ")
        assert _raw(url, b"NONSENSE\r\n\r\n").startswith(b"HTTP/1.1 400 Bad Request\r\n")


def test_ttft_and_itl_pace_the_stream() -> None:
    with running(ttft_ms=150, itl_ms=40) as url, httpx.Client(base_url=url) as client:
        stamps: list[float] = []
        start = time.monotonic()
        body = {"prompt": "a", "max_tokens": 5, "stream": True}
        with client.stream("POST", "/v1/completions", json=body) as response:
            for line in response.iter_lines():
                if line.startswith("data: {"):
                    stamps.append(time.monotonic() - start)
        # the stand-in waits its TTFT, then its ITL between tokens: no token comes sooner (how
        # much later is this machine's load, not the stand-in's behaviour)
        assert len(stamps) == 5
        # token i is due TTFT + i x ITL after the stand-in got the request (due times count from
        # the request, so a late token does not push the next ones back)
        for i, stamp in enumerate(stamps):
            assert stamp >= 0.15 + i * 0.04 - 0.001  # order: sent, then due, then received
        whole_start = time.monotonic()
        client.post("/v1/completions", json={"prompt": "a", "max_tokens": 5})
        # order: a whole answer waits TTFT + 4 ITLs before it is sent
        assert time.monotonic() - whole_start >= 0.15 + 4 * 0.04 - 0.01


def _running_count(client: httpx.Client) -> int:
    for line in client.get("/metrics").text.splitlines():
        if line.startswith("vllm:num_requests_running{"):
            return int(line.rsplit(" ", 1)[1])
    raise AssertionError("no vllm:num_requests_running")


def _wait_running(client: httpx.Client, want: int) -> None:
    deadline = time.monotonic() + 60
    while _running_count(client) != want:
        # hang guard: 60 s for a count that changes within milliseconds
        assert time.monotonic() < deadline, f"running never became {want}"
        time.sleep(0.02)


def test_metrics_count_in_flight_streams_and_abandoned_ones_end() -> None:
    with running(engine="vllm", itl_ms=50) as url, httpx.Client(base_url=url) as client:
        body = b'{"prompt": "a", "max_tokens": 200, "stream": true}'
        request = b"POST /v1/completions HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n%s" % (
            len(body),
            body,
        )
        with socket.create_connection(("127.0.0.1", _port(url))) as one:
            one.sendall(request)
            with socket.create_connection(("127.0.0.1", _port(url))) as two:
                two.sendall(request)
                got = b""
                while b" w0" not in got:
                    got += one.recv(4096)
                _wait_running(client, 2)
            _wait_running(client, 1)  # the second client went away mid-stream
        _wait_running(client, 0)


def test_prefill_answers_one_token_whatever_was_asked() -> None:
    with running(role="prefill", binds=()) as url, httpx.Client(base_url=url) as client:
        body = {"prompt": "a b", "max_tokens": 50, "stream": True, "bootstrap_room": 7}
        events = _sse(client.post("/v1/completions", json=body).text)
        assert [e["choices"][0]["text"] for e in events[:-1]] == [" w0"]
        native = client.post(
            "/generate", json={"text": "a", "sampling_params": {"max_new_tokens": 9}}
        )
        assert native.json()["text"] == " w0"


def test_vllm_prefill_hands_back_kv_transfer_params_and_refuses_other_models() -> None:
    with (
        running(engine="vllm", role="prefill", served_model_name="tiny") as url,
        httpx.Client(base_url=url) as client,
    ):
        asked = {"do_remote_decode": True, "do_remote_prefill": False, "remote_host": None}
        body = {"model": "tiny", "prompt": "a", "max_tokens": 1, "kv_transfer_params": asked}
        answer = client.post("/v1/completions", json=body).json()
        assert answer["kv_transfer_params"]["do_remote_prefill"] is True
        assert answer["kv_transfer_params"]["remote_host"] == "127.0.0.1"
        plain = client.post("/v1/completions", json={"model": "tiny", "prompt": "a"}).json()
        assert "kv_transfer_params" not in plain
        other = client.post("/v1/completions", json={"model": "other", "prompt": "a"})
        assert other.status_code == 404
        assert other.json()["error"]["message"] == "The model `other` does not exist."


def test_log_requests_appends_one_line_per_request(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    with running(log_requests=log) as url, httpx.Client(base_url=url) as client:
        client.get("/health?probe=1")
        client.post("/start_profile", json={"output_dir": str(tmp_path / "p"), "num_steps": 3})
        client.post("/v1/completions", content=b"not json")
        lines = [msgspec.json.decode(line) for line in log.read_bytes().splitlines()]
    assert [(e["method"], e["path"]) for e in lines] == [
        ("GET", "/health"),
        ("POST", "/start_profile"),
        ("POST", "/v1/completions"),
    ]
    assert lines[0]["query"] == "probe=1"
    assert lines[1]["body"] == {"output_dir": str(tmp_path / "p"), "num_steps": 3}
    assert lines[2]["body"] == "not json"
    assert all(abs(e["time"] - time.time()) < 60 for e in lines)


def test_bind_ports_accept_and_close() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    with running(binds=(("bootstrap", free),)), socket.create_connection(("127.0.0.1", free)) as s:
        s.settimeout(5)
        assert s.recv(16) == b""


def test_the_system_and_http_bind_ports_serve_http_too() -> None:
    """Readiness probes of sequential starts ask the Dynamo system port for /health, and a
    direct worker's own HTTP port is bound beside the public one: both answer like --port."""
    free = []
    for _ in range(2):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            free.append(probe.getsockname()[1])
    with running(binds=(("sys", free[0]), ("http", free[1]))):
        for port in free:
            answer = httpx.get(f"http://127.0.0.1:{port}/health", timeout=5)
            assert answer.status_code == 200
            models = httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=5).json()
            assert [m["id"] for m in models["data"]] == ["M"]


def test_a_taken_port_is_named() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with (
            pytest.raises(OSError, match=rf"cannot listen on 127.0.0.1:{port} \(nixl\): "),
            running(binds=(("nixl", port),)),
        ):
            pass
