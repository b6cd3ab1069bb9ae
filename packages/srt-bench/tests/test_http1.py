"""The stdlib HTTP/1.1 client against scripted raw responses on 127.0.0.1."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_fakes.scripted_server import Reply, scripted_server

from srt_bench.client import PreparedRequest, StreamClient
from srt_bench.http1 import HttpError, Pool
from srt_bench.records import RequestRecord

SSE = (
    b'data: {"choices":[{"text":" w1"}]}\n\n'
    b'data: {"choices":[{"text":" w2"}]}\n\n'
    b'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}\n\n'
    b"data: [DONE]\n\n"
)
HEAD_CHUNKED = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
)


def _chunked(data: bytes, size: int) -> bytes:
    out = b""
    for i in range(0, len(data), size):
        part = data[i : i + size]
        out += b"%x;ext=1\r\n%s\r\n" % (len(part), part)
    return out + b"0\r\nX-Trailer: 1\r\n\r\n"


@pytest.fixture(params=[True, False], ids=["kernel-stamps", "loop-stamps"])
def kernel_stamps(request: pytest.FixtureRequest) -> bool:
    """Every transport test runs on both byte movers (the parser is the same)."""
    return bool(request.param)


async def _send(
    kernel_stamps: bool, url: str, *, reuse: bool = True, n: int = 1, timeout: float = 5.0
) -> list[RequestRecord]:
    client = StreamClient(
        endpoint=url,
        api="completions",
        reuse_connections=reuse,
        timeout_seconds=timeout,
        kernel_stamps=kernel_stamps,
    )
    req = PreparedRequest(body=b'{"prompt":"x"}', prompt_tokens=3)
    try:
        return [await client.send(req, origin=0.0) for _ in range(n)]
    finally:
        await client.aclose()


def _ok(r: RequestRecord) -> None:
    assert r.error == "" and r.success
    assert r.text == " w1 w2"
    assert (r.output_tokens, r.server_prompt_tokens, r.token_source) == (2, 3, "usage")
    # one chunk per arrival: the two text events may arrive together (one chunk of 2 tokens)
    assert sum(r.chunk_tokens) == 2 and len(r.chunk_times) == len(r.chunk_tokens)
    assert len(r.itls) == len(r.chunk_times) - 1


@pytest.mark.parametrize("split", [1, 2, 7, 1000])
def test_chunked_stream_split_at_any_byte(kernel_stamps: bool, split: int) -> None:
    body = HEAD_CHUNKED + _chunked(SSE, 5)
    pieces = tuple(body[i : i + split] for i in range(0, len(body), split))

    async def main() -> None:
        async with scripted_server([Reply(pieces), Reply((body,))]) as (url, heads):
            records = await _send(kernel_stamps, url, n=2)
            for r in records:
                _ok(r)
            assert b"Connection: close" not in heads[0]

    asyncio.run(main())


def test_content_length_and_close_delimited_bodies(kernel_stamps: bool) -> None:
    by_length = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(SSE), SSE)
    by_close = b"HTTP/1.0 200 OK\r\n\r\n" + SSE

    async def main() -> None:
        async with scripted_server([Reply((by_length,)), Reply((by_close,), close=True)]) as (
            url,
            _,
        ):
            for r in await _send(kernel_stamps, url, n=2):
                _ok(r)

    asyncio.run(main())


def test_http_errors_and_missing_done_are_failures(kernel_stamps: bool) -> None:
    err = b'{"error":{"message":"model not found"}}'
    status_500 = b"HTTP/1.1 404 Not Found\r\nContent-Length: %d\r\n\r\n%s" % (len(err), err)
    event = b'data: {"choices":[{"text":"a"}]}\n\n'
    no_done = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(event), event)

    async def main() -> None:
        async with scripted_server([Reply((status_500,)), Reply((no_done,))]) as (url, _):
            r1, r2 = await _send(kernel_stamps, url, n=2)
        assert not r1.success and r1.error == 'HTTP 404: {"error":{"message":"model not found"}}'
        assert not r2.success and r2.error == "stream ended without [DONE]"

    asyncio.run(main())


def test_no_reuse_sends_connection_close(kernel_stamps: bool) -> None:
    body = HEAD_CHUNKED + _chunked(SSE, 100)

    async def main() -> None:
        async with scripted_server([Reply((body,)), Reply((body,))]) as (url, heads):
            for r in await _send(kernel_stamps, url, reuse=False, n=2):
                _ok(r)
            assert all(b"Connection: close" in h for h in heads)

    asyncio.run(main())


def test_early_close_and_timeout_are_reported(kernel_stamps: bool) -> None:
    async def main() -> None:
        async with scripted_server([Reply((HEAD_CHUNKED + b"5\r\nda",), close=True)]) as (url, _):
            (r,) = await _send(kernel_stamps, url)
        assert r.error == "connection closed mid-response"
        async with scripted_server([Reply((HEAD_CHUNKED,), delay=2.0)]) as (url, _):
            (r,) = await _send(kernel_stamps, url, timeout=0.2)
        assert r.error == "no complete response within 0.2 s"

    asyncio.run(main())


def test_unreachable_and_bad_urls(kernel_stamps: bool) -> None:
    async def main() -> None:
        (r,) = await _send(kernel_stamps, "http://127.0.0.1:9")
        assert r.error.startswith("cannot connect to 127.0.0.1:9")

    asyncio.run(main())
    from srt_bench.errors import BenchConfigError

    with pytest.raises(BenchConfigError, match="'ftp://x' is not an http:// or https:// URL"):
        Pool("ftp://x", reuse=True, headers={})
    assert issubclass(HttpError, Exception)
