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
#: Hang guard of every wait between the server thread and the stalled loop: each wait ends in
#: well under a second unless the test is broken.
HANG_GUARD_S = 30.0
#: The stall goes on this long after the second token was sent.
AFTER_S = 0.05


class _Stall:
    """The order of events, forced: the server sends the first token, then stalls the client's
    loop (a callback that blocks it), sends the second token while the loop is blocked, and the
    loop stays blocked `AFTER_S` more before it goes on (a real stall outlasts the arrival; the
    kernel stamp's conversion to `perf_counter` may err by microseconds, and only earlier).
    `ended` is the loop's `perf_counter` when the stall ended."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stalled, self.sent = threading.Event(), threading.Event()
        self.ended = 0.0

    def block(self) -> None:  # runs on the client's loop: nothing else of the loop runs now
        self.stalled.set()
        assert self.sent.wait(HANG_GUARD_S)  # hang guard: 30 s for a 2-token send on loopback
        time.sleep(AFTER_S)
        self.ended = time.perf_counter()


@contextmanager
def _two_token_server(stall: _Stall) -> Iterator[str]:
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
            assert stall.loop is not None
            stall.loop.call_soon_threadsafe(stall.block)
            if stall.stalled.wait(HANG_GUARD_S):  # hang guard: the loop runs the callback next
                conn.sendall(REST)  # the kernel has it when sendall returns (loopback)
            stall.sent.set()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        thread.join(timeout=HANG_GUARD_S)
        listener.close()


def _stalled_request(*, kernel_stamps: bool) -> tuple[RequestRecord, _Stall]:
    stall = _Stall()

    async def main(url: str) -> RequestRecord:
        client = StreamClient(
            endpoint=url,
            api="completions",
            reuse_connections=False,
            timeout_seconds=HANG_GUARD_S,
            kernel_stamps=kernel_stamps,
        )
        assert client.stamps == ("kernel" if kernel_stamps else "loop")
        stall.loop = asyncio.get_running_loop()
        try:  # origin 0.0: the record keeps absolute perf_counter stamps
            return await client.send(PreparedRequest(body=b"{}", prompt_tokens=1), origin=0.0)
        finally:
            await client.aclose()

    with _two_token_server(stall) as url:
        record = asyncio.run(main(url))
    return record, stall


@pytest.mark.skipif(not KERNEL_STAMPS, reason="kernel receive times need Linux")
def test_a_token_that_arrives_during_a_stall_keeps_its_arrival_time() -> None:
    """The second token reaches the socket while the loop is blocked: its kernel stamp is its
    arrival, before the stall ended; a loop-read stamp is the read, after the stall ended."""
    kernel, k_stall = _stalled_request(kernel_stamps=True)
    loop, l_stall = _stalled_request(kernel_stamps=False)
    for r in (kernel, loop):
        assert r.success and r.text == " a b" and sum(r.chunk_tokens) == 2
    # the second token's stamp is its arrival, before the stall ended (when the kernel hands
    # both segments to one read, they carry one stamp: one chunk of two tokens, not a 0 ms gap)
    assert kernel.chunk_times[-1] < k_stall.ended  # order: arrived while the loop was blocked
    # a loop-read stamp is the read, after the stall ended (the loop may read both tokens at
    # once: then they are one chunk of two tokens, not a gap of 0 ms)
    assert loop.chunk_times[-1] >= l_stall.ended  # order: the stall ended, then the loop read


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
