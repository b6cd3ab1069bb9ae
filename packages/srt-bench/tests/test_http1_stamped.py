"""Kernel receive times: a token that arrives while the client's event loop is stalled keeps the
time it arrived, where a loop-read stamp takes the time the loop got back to it."""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from srt_bench.client import PreparedRequest, StreamClient
from srt_bench.http1 import Pool
from srt_bench.http1_stamped import KERNEL_STAMPS, SO_TIMESTAMPNS, kernel_delay
from srt_bench.records import RequestRecord

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
FIRST = b'data: {"choices":[{"text":" a"}]}\n\n'
REST = (
    b'data: {"choices":[{"text":" b"}]}\n\n'
    b'data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}\n\n'
    b"data: [DONE]\n\n"
)
#: The server sends the second token this long after the first.
GAP_S = 0.06
#: The client's loop blocks from STALL_AT_S after sending, for STALL_S (over the second token).
STALL_AT_S, STALL_S = 0.02, 0.30


@contextmanager
def _two_token_server() -> Iterator[str]:
    """A thread (so it runs while the client's loop is blocked) that answers one request."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            got = b""
            while b"\r\n\r\n" not in got:
                got += conn.recv(65536)
            conn.sendall(HEAD + FIRST)
            time.sleep(GAP_S)
            conn.sendall(REST)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        thread.join(timeout=5)
        listener.close()


def _stalled_request(url: str, *, kernel_stamps: bool) -> RequestRecord:
    async def main() -> RequestRecord:
        client = StreamClient(
            endpoint=url,
            api="completions",
            reuse_connections=False,
            timeout_seconds=5,
            kernel_stamps=kernel_stamps,
        )
        assert client.stamps == ("kernel" if kernel_stamps else "loop")
        loop = asyncio.get_running_loop()
        loop.call_later(STALL_AT_S, time.sleep, STALL_S)  # the whole loop blocks
        try:
            return await client.send(PreparedRequest(body=b"{}", prompt_tokens=1), origin=0.0)
        finally:
            await client.aclose()

    return asyncio.run(main())


@pytest.mark.skipif(not KERNEL_STAMPS, reason="kernel receive times need Linux")
def test_a_token_that_arrives_during_a_stall_keeps_its_arrival_time() -> None:
    with _two_token_server() as url:
        kernel = _stalled_request(url, kernel_stamps=True)
    with _two_token_server() as url:
        loop = _stalled_request(url, kernel_stamps=False)
    for r in (kernel, loop):
        assert r.success and r.text == " a b" and len(r.itls) == 1
    # The second token left the server GAP_S after the first; its kernel stamp says so, while
    # the loop's read happened only when the stall ended (STALL_AT_S + STALL_S after sending).
    assert GAP_S * 0.9 <= kernel.itls[0] < GAP_S + 0.1
    assert loop.itls[0] >= STALL_S - GAP_S


def test_kernel_delay_reads_the_timestamp_message() -> None:
    stamp = struct.pack("@qq", 1_700_000_000, 250_000_000)
    ancillary = [(socket.SOL_SOCKET, SO_TIMESTAMPNS, stamp)]
    assert kernel_delay(ancillary, 1_700_000_000.75) == pytest.approx(0.5)
    # A clock step backwards never makes a negative wait; no message means no wait.
    assert kernel_delay(ancillary, 1_700_000_000.0) == 0.0
    assert kernel_delay([], 5.0) == 0.0
    assert kernel_delay([(socket.SOL_SOCKET, SO_TIMESTAMPNS + 1, stamp)], 2e9) == 0.0


def test_tls_and_the_opt_out_use_loop_stamps() -> None:
    assert Pool("https://example.invalid", reuse=True, headers={}, kernel_stamps=True).stamps == (
        "loop"
    )
    assert Pool("http://127.0.0.1:1", reuse=True, headers={}).stamps == "loop"
    expected = "kernel" if KERNEL_STAMPS else "loop"
    assert Pool("http://127.0.0.1:1", reuse=True, headers={}, kernel_stamps=True).stamps == (
        expected
    )
