"""The stand-in as a process: signals, a taken port, and the REAL routers in front of it.

Each router test starts stand-ins and sglang-router, smg or vllm-router (the PyPI wheels in
the dev environment) with the arguments the planner gives them, waits for the router's
``/workers`` to count the workers the way the supervisor's health gate does, sends a streamed
completion and chat requests through the router and checks tokens and usage, then reads the
stand-ins' request logs to see what the router sent each of them.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from srt_runtime.health import Counts, parse_router_workers

BIN = Path(sys.executable).parent
TINY = Path(__file__).resolve().parents[3] / "examples" / "models" / "tiny-word"
ROUTERS = {
    "sglang-router": [sys.executable, "-m", "sglang_router.launch_router"],
    "smg": [str(BIN / "smg"), "launch"],
    "vllm-router": [str(BIN / "vllm-router")],
}
MODEL = "tiny"


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class Processes:
    """Started programs, each logging to a file; all stopped at the end of the test."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        with (self.folder / f"{name}.log").open("wb") as out:
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
        self.procs.append(proc)
        return proc

    def log(self, name: str) -> str:
        return (self.folder / f"{name}.log").read_text(errors="replace")

    def standin(self, name: str, port: int, *extra: str) -> None:
        argv = [sys.executable, "-m", "srt_runtime.standin", "--host", "127.0.0.1"]
        argv += ["--port", str(port), "--served-model-name", MODEL]
        argv += ["--log-requests", str(self.folder / f"{name}.jsonl"), *extra]
        proc = self.start(name, argv)
        deadline = time.monotonic() + 60
        while "stand-in for" not in self.log(name):
            assert proc.poll() is None, self.log(name)
            # hang guard: 60 s for a start-up of about a second (10 s failed beside 2 CPU hogs)
            assert time.monotonic() < deadline, f"{name} did not start"
            time.sleep(0.02)

    def requests(self, name: str) -> list[dict[str, Any]]:
        lines = (self.folder / f"{name}.jsonl").read_bytes().splitlines()
        return [msgspec.json.decode(line) for line in lines]

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture
def procs(tmp_path: Path) -> Iterator[Processes]:
    running = Processes(tmp_path)
    try:
        yield running
    finally:
        running.stop()


# --- the process ----------------------------------------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_it_mid_stream(procs: Processes, sig: signal.Signals) -> None:
    (port,) = _free_ports(1)
    procs.standin("s", port, "--engine", "sglang", "--role", "prefill", "--itl-ms", "100")
    body = b'{"prompt": "a", "max_tokens": 1000, "stream": true}'
    head = b"POST /v1/completions HTTP/1.1\r\ncontent-length: %d\r\n\r\n" % len(body)
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(head + body)
        assert sock.recv(4096).startswith(b"HTTP/1.1 200 OK")
        proc = procs.procs[0]
        proc.send_signal(sig)
        # hang guard: the stream of 1,000 tokens 100 ms apart would last 100 s
        assert proc.wait(timeout=30) == 0
    assert procs.log("s") == f"stand-in for sglang prefill 'tiny' on :{port}\n"


def test_startup_line_names_the_extra_ports_and_a_taken_one_exits_1(procs: Processes) -> None:
    port, bootstrap, nixl = _free_ports(3)
    procs.standin("ok", port, "--engine", "vllm", "--bind", f"nixl={nixl}")
    assert procs.log("ok") == f"stand-in for vllm agg 'tiny' on :{port} (also nixl :{nixl})\n"
    argv = [sys.executable, "-m", "srt_runtime.standin", "--host", "127.0.0.1", "--port"]
    argv += [str(bootstrap), "--served-model-name", MODEL, "--engine", "sglang"]
    done = subprocess.run(
        [*argv, "--bind", f"bootstrap={port}"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr == (
        f"stand-in: cannot listen on 127.0.0.1:{port} (bootstrap): Address already in use\n"
    )


# --- behind the real routers ----------------------------------------------------------------


def _sse(text: str) -> list[Any]:
    events = [e for e in text.split("\n\n") if e.strip()]
    assert all(e.startswith("data: ") for e in events), text[:500]
    return [e[6:] if e == "data: [DONE]" else msgspec.json.decode(e[6:]) for e in events]


def _texts(events: list[Any]) -> list[str]:
    out = []
    for event in events:
        if isinstance(event, dict):
            for choice in event.get("choices", []):
                piece = choice.get("text") or (choice.get("delta") or {}).get("content")
                if piece:
                    out.append(piece)
    return out


def _usage(events: list[Any]) -> dict[str, int]:
    usages = [e["usage"] for e in events if isinstance(e, dict) and e.get("usage")]
    assert len(usages) == 1, events
    return dict(usages[0])


def _wait_workers(client: httpx.Client, want: Counts, router: Processes, name: str) -> Any:
    deadline = time.monotonic() + 15
    seen: object = None
    while time.monotonic() < deadline:
        assert router.procs[-1].poll() is None, router.log(name)
        with contextlib.suppress(httpx.HTTPError):
            response = client.get("/workers")
            if response.status_code == 200:
                seen = response.json()
                if parse_router_workers(seen) == want:
                    return seen
        time.sleep(0.1)
    raise AssertionError(f"{name} /workers never counted {want}: {seen!r}")


MODES = [
    ("sglang-router", False),
    ("sglang-router", True),
    ("smg", False),
    ("smg", True),
    ("vllm-router", False),
    ("vllm-router", True),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    "router, pd", MODES, ids=[f"{r}-{'pd' if pd else 'agg'}" for r, pd in MODES]
)
def test_requests_through_the_real_router(procs: Processes, router: str, pd: bool) -> None:
    vllm = router == "vllm-router"
    engine = "vllm" if vllm else "sglang"
    a, b, extra, port, metrics = _free_ports(5)
    common = ["--engine", engine]
    if not vllm:
        common += ["--model-path", str(TINY)]  # the routers load its tokenizer
    argv = list(ROUTERS[router])
    if pd:
        side = "nixl" if vllm else "bootstrap"
        procs.standin("prefill", a, *common, "--role", "prefill", "--bind", f"{side}={extra}")
        procs.standin("decode", b, *common, "--role", "decode")
        argv += ["--vllm-pd-disaggregation" if vllm else "--pd-disaggregation"]
        argv += ["--prefill", f"http://127.0.0.1:{a}", str(extra)]
        argv += ["--decode", f"http://127.0.0.1:{b}"]
        want = Counts(prefill=1, decode=1)
    else:
        procs.standin("agg0", a, *common)
        procs.standin("agg1", b, *common)
        argv += ["--worker-urls", f"http://127.0.0.1:{a}", f"http://127.0.0.1:{b}"]
        want = Counts(prefill=0, decode=2)
    # Every router's metrics port defaults to 29000: two on one machine would collide.
    argv += ["--host", "127.0.0.1", "--port", str(port), "--prometheus-port", str(metrics)]
    if router == "smg":
        argv += ["--shutdown-grace-period-secs", "1"]  # else a SIGTERM takes 5 s
    procs.start(router, argv)

    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
        workers = _wait_workers(client, want, procs, router)
        assert {w["worker_type"] for w in workers["workers"]} == (
            {"prefill", "decode"} if pd else {"regular"}
        )
        completion = client.post(
            "/v1/completions",
            json={
                "model": MODEL,
                "prompt": "w1 w2 w3 w4",
                "max_tokens": 7,
                "stream": True,
                "stream_options": {"include_usage": True},
            },
        )
        assert completion.status_code == 200, completion.text
        events = _sse(completion.text)
        assert _texts(events) == [f" w{i}" for i in range(7)]
        assert events[-1] == "[DONE]"
        assert _usage(events) == {"prompt_tokens": 4, "completion_tokens": 7, "total_tokens": 11}

        messages = [{"role": "user", "content": "w1 w2 w3"}]
        chat = client.post(
            "/v1/chat/completions",
            json={
                "model": MODEL,
                "messages": messages,
                "max_tokens": 5,
                "stream": True,
                "stream_options": {"include_usage": True},
            },
        )
        assert chat.status_code == 200, chat.text
        events = _sse(chat.text)
        assert len(_texts(events)) == 5
        assert "".join(_texts(events)).split() == [f"w{i}" for i in range(5)]
        assert _usage(events)["prompt_tokens"] == 3

        whole = client.post(
            "/v1/chat/completions", json={"model": MODEL, "messages": messages, "max_tokens": 4}
        )
        assert whole.status_code == 200, whole.text
        assert whole.json()["choices"][0]["message"]["content"] == " w0 w1 w2 w3"
        assert whole.json()["usage"]["completion_tokens"] == 4

    names = ["prefill", "decode"] if pd else ["agg0", "agg1"]
    for name in names:
        # Every router asks each worker's /health before it sends it work.
        seen = [e["path"] for e in procs.requests(name)]
        assert "/health" in seen
        if "/v1/completions" in seen:
            assert seen.index("/health") < seen.index("/v1/completions")
    if pd:
        _check_pd_handshake(procs, vllm=vllm, extra=extra)
    else:
        served = procs.requests("agg0") + procs.requests("agg1")
        posts = [e for e in served if e["method"] == "POST" and e["path"].startswith("/v1/")]
        assert [e["path"] for e in posts if not e["path"].endswith("/render")] == [
            "/v1/completions",
            "/v1/chat/completions",
            "/v1/chat/completions",
        ]


def _check_pd_handshake(procs: Processes, *, vllm: bool, extra: int) -> None:
    def generations(name: str) -> list[dict[str, Any]]:
        return [
            e["body"]
            for e in procs.requests(name)
            if e["path"] in ("/v1/completions", "/v1/chat/completions")
        ]

    prefill, decode = generations("prefill"), generations("decode")
    assert len(prefill) == len(decode) == 3
    if vllm:
        # vLLM PD: the prefill first, with max_tokens 1 and a request for remote decode; the
        # decode then gets the prefill's kv_transfer_params.
        assert [p["max_tokens"] for p in prefill] == [1, 1, 1]
        assert all(p["kv_transfer_params"]["do_remote_decode"] is True for p in prefill)
        assert all(d["kv_transfer_params"]["remote_port"] == extra for d in decode)
        assert all(d["kv_transfer_params"]["do_remote_prefill"] is True for d in decode)
    else:
        # SGLang PD: the same request to both, paired by bootstrap host, port and room.
        for p, d in zip(prefill, decode, strict=True):
            assert p["bootstrap_room"] == d["bootstrap_room"]
            assert (p["bootstrap_host"], p["bootstrap_port"]) == ("127.0.0.1", extra)
            assert p["stream"] == d["stream"]
