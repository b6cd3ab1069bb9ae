"""A minimal OpenAI-compatible streaming server on raw asyncio (stdlib only).

It answers every completion or chat request at once with a fixed stream, so a benchmark against it
measures the client, not the server. Behaviours cover the shapes real servers produce: one token
per chunk, tokens only in `usage` (the Dynamo mocker 1.6.1 trap), no `usage` at all, failures;
or it sends each token on a known schedule, fixed (`schedule`) or following the load
(`curve`: latency rising with the requests in flight, for the capacity search). About 440
lines: one protocol class and its response shapes, kept together.

Run it as a process: `python -m srt_bench.testing --port 18080 --tokens 64`.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import threading
import time
from collections.abc import Callable, Sequence
from typing import Literal

import msgspec

from srt_bench.testing.curve import LatencyCurve
from srt_bench.testing.schedule import TokenSchedule, prompt_key, token_times

__all__ = ["FixedStreamServer", "ServerBehaviour", "main"]

Mode = Literal["per_token", "usage_only", "no_usage"]


class ServerBehaviour(msgspec.Struct, frozen=True, kw_only=True):
    mode: Mode = "per_token"
    #: Tokens per response, unless `honour_max_tokens` and the request sets `max_tokens`.
    output_tokens: int = 16
    honour_max_tokens: bool = False
    #: Report prompt tokens as the whitespace-separated words of the prompt (else 0).
    count_prompt_tokens: bool = False
    #: Every n-th request (1-based) answers HTTP 500; 0 = never.
    fail_every: int = 0
    #: Seconds between token chunks (0: the whole stream in one write).
    inter_chunk_delay: float = 0.0
    #: Send each token at its time on this schedule (`per_token` mode; keyed by the prompt, so
    #: the sender knows every request's truth). `GET /schedule_stats` reports, and resets, how
    #: late the server's writes were against it.
    schedule: TokenSchedule | None = None
    #: Send each token on the schedule of the load the request arrives at (`per_token` mode; the
    #: requests in flight, itself included; `srt_bench.testing.curve`). Wins over `schedule`.
    curve: LatencyCurve | None = None


class _Body(msgspec.Struct):
    max_tokens: int | None = None
    prompt: str | None = None
    messages: list[dict[str, object]] | None = None
    forward_sleep_time: float | None = None
    #: The OpenAI `user` field: a scheduled response's write times are kept under it.
    user: str | None = None


_body_decoder = msgspec.json.Decoder(_Body)
_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
    b"transfer-encoding: chunked\r\ncache-control: no-cache\r\n\r\n"
)


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _event(obj: object) -> bytes:
    return _chunk(b"data: " + msgspec.json.encode(obj) + b"\n\n")


@functools.lru_cache(maxsize=4096)
def _token_event(chat: bool, i: int) -> bytes:
    word = f" w{i % 1000}"
    if chat:
        return _event(
            {
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": {"content": word}}],
            }
        )
    return _event({"object": "text_completion", "choices": [{"index": 0, "text": word}]})


def _stream_parts(b: ServerBehaviour, chat: bool, tokens: int, prompt_tokens: int) -> list[bytes]:
    """The response as a list of writes: head, token chunks, tail."""
    parts = [_HEAD]
    if b.mode == "usage_only":
        if chat:
            parts.append(_event({"choices": [{"index": 0, "delta": {"role": "assistant"}}]}))
    else:
        parts.extend(_token_event(chat, i) for i in range(tokens))
    finish = {"index": 0, "finish_reason": "length"}
    if chat:
        finish["delta"] = {}
    else:
        finish["text"] = ""
    tail = _event({"choices": [finish]})
    if b.mode != "no_usage":
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": tokens}
        tail += _event({"choices": [], "usage": usage})
    tail += _chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n"
    parts.append(tail)
    return parts


def _json_response(status: str, obj: object) -> bytes:
    body = msgspec.json.encode(obj)
    return b"HTTP/1.1 %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (
        status.encode(),
        len(body),
        body,
    )


def _lateness_stats(lateness: list[float]) -> dict[str, float | int | None]:
    ordered = sorted(lateness)

    def at(p: float) -> float | None:
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000.0 if ordered else None

    return {"writes": len(ordered), "p50_ms": at(0.5), "p99_ms": at(0.99), "max_ms": at(1.0)}


class _State:
    def __init__(self, behaviour: ServerBehaviour) -> None:
        self.behaviour = behaviour
        self.requests = 0
        self.slow_down_bodies: list[float | None] = []
        #: Seconds each scheduled write came after its due time.
        self.lateness: list[float] = []
        #: `perf_counter()` of each token write of a scheduled response, by the request's `user`
        #: (CLOCK_MONOTONIC on Linux: the same clock in every process of the machine).
        self.sent: dict[str, list[float]] = {}
        #: Scheduled responses not yet finished (the load a `curve` is a function of).
        self.in_flight = 0
        #: The load (requests in flight, itself included) each `curve` request was scheduled at.
        self.curve_loads: list[int] = []
        self.transports: set[asyncio.Transport] = set()
        self.fixed: dict[bool, bytes] = {
            chat: b"".join(_stream_parts(behaviour, chat, behaviour.output_tokens, 0))
            for chat in (True, False)
        }


class _Protocol(asyncio.Protocol):
    def __init__(self, state: _State) -> None:
        self._state = state
        self._buffer = b""
        self._transport: asyncio.Transport | None = None

    @property
    def transport(self) -> asyncio.Transport | None:
        return self._transport

    @property
    def state(self) -> _State:
        return self._state

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        self._state.transports.add(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._transport is not None:
            self._state.transports.discard(self._transport)

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        while True:
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self._buffer[:end].decode("latin-1")
            lines = head.split("\r\n")
            length = 0
            close = False
            for line in lines[1:]:
                name, _, value = line.partition(":")
                key = name.strip().lower()
                if key == "content-length":
                    length = int(value.strip())
                elif key == "connection" and value.strip().lower() == "close":
                    close = True
            if len(self._buffer) < end + 4 + length:
                return
            body = self._buffer[end + 4 : end + 4 + length]
            self._buffer = self._buffer[end + 4 + length :]
            parts = lines[0].split(" ")
            self._handle(parts[0], parts[1] if len(parts) > 1 else "/", body, close)

    def _write(self, data: bytes, close: bool) -> None:
        assert self._transport is not None
        self._transport.write(data)
        if close:
            self._transport.close()

    def _handle(self, method: str, path: str, body: bytes, close: bool) -> None:
        state = self._state
        b = state.behaviour
        if method == "GET" and path in {"/health", "/v1/models"}:
            self._write(
                _json_response("200 OK", {"object": "list", "data": [{"id": "fixed"}]}), close
            )
            return
        if method == "GET" and path == "/schedule_stats":
            self._write(_json_response("200 OK", _lateness_stats(state.lateness)), close)
            state.lateness.clear()
            return
        if method == "GET" and path == "/sent_times":
            self._write(_json_response("200 OK", state.sent), close)
            state.sent = {}
            return
        if method == "POST" and path == "/slow_down":
            state.slow_down_bodies.append(_body_decoder.decode(body).forward_sleep_time)
            self._write(_json_response("200 OK", {"success": True}), close)
            return
        if method != "POST" or path not in {"/v1/completions", "/v1/chat/completions"}:
            self._write(_json_response("404 Not Found", {"error": {"message": path}}), close)
            return
        state.requests += 1
        if b.fail_every and state.requests % b.fail_every == 0:
            self._write(
                _json_response("500 Internal Server Error", {"error": {"message": "injected"}}),
                close,
            )
            return
        chat = path == "/v1/chat/completions"
        scripted = b.schedule is not None or b.curve is not None
        if not (b.honour_max_tokens or b.count_prompt_tokens or b.inter_chunk_delay or scripted):
            self._write(state.fixed[chat], close)
            return
        req = _body_decoder.decode(body)
        tokens = b.output_tokens
        if b.honour_max_tokens and req.max_tokens is not None:
            tokens = req.max_tokens
        contents = [m.get("content") for m in req.messages or []]
        text = prompt_key(req.prompt, [c for c in contents if isinstance(c, str)])
        prompt_tokens = len(text.split()) if b.count_prompt_tokens else 0
        parts = _stream_parts(b, chat, tokens, prompt_tokens)
        if b.curve is not None and b.mode == "per_token" and tokens > 0:
            state.in_flight += 1
            state.curve_loads.append(state.in_flight)
            times = token_times(b.curve.schedule_at(state.in_flight), text, tokens)
            self._scheduled(parts, times, close, req.user, done=self._finished)
            return
        if b.schedule is not None and b.mode == "per_token" and tokens > 0:
            self._scheduled(parts, token_times(b.schedule, text, tokens), close, req.user)
            return
        if not b.inter_chunk_delay:
            self._write(b"".join(parts), close)
            return
        asyncio.get_running_loop().create_task(self._slow(parts, close))

    def _finished(self) -> None:
        self._state.in_flight -= 1

    def _scheduled(
        self,
        parts: Sequence[bytes],
        times: Sequence[float],
        close: bool,
        user: str | None,
        done: Callable[[], None] | None = None,
    ) -> None:
        """Head now; token i at `times[i]` after now; the tail with the last token; `done` once
        the response ended (sent, or its connection gone); write times kept under `user`."""
        assert self._transport is not None
        self._transport.write(parts[0])
        sent = None if user is None else self._state.sent.setdefault(user, [])
        _ScheduledStream(self, parts, times, close, done=done, sent=sent).start()

    async def _slow(self, parts: Sequence[bytes], close: bool) -> None:
        for i, part in enumerate(parts):
            if i > 1:
                await asyncio.sleep(self._state.behaviour.inter_chunk_delay)
            self._write(part, close and i == len(parts) - 1)


class _ScheduledStream:
    """One response on its schedule: one timer pending at a time (the next token's)."""

    __slots__ = ("close", "done", "loop", "parts", "protocol", "sent", "t0", "times")

    def __init__(
        self,
        protocol: _Protocol,
        parts: Sequence[bytes],
        times: Sequence[float],
        close: bool,
        *,
        done: Callable[[], None] | None,
        sent: list[float] | None,
    ) -> None:
        self.protocol = protocol
        self.sent = sent
        self.parts = parts
        self.times = times
        self.close = close
        self.done = done
        self.loop = asyncio.get_running_loop()
        self.t0 = self.loop.time()

    def start(self) -> None:
        self.loop.call_at(self.t0 + self.times[0], self.emit, 0)

    def emit(self, i: int) -> None:
        transport = self.protocol.transport
        if transport is None or transport.is_closing():
            if self.done is not None:
                self.done()
            return
        self.protocol.state.lateness.append(self.loop.time() - self.t0 - self.times[i])
        if i == len(self.times) - 1:
            if self.done is not None:
                self.done()
            transport.write(self.parts[i + 1] + self.parts[-1])
            self._sent()
            if self.close:
                transport.close()
            return
        transport.write(self.parts[i + 1])
        self._sent()
        self.loop.call_at(self.t0 + self.times[i + 1], self.emit, i + 1)

    def _sent(self) -> None:
        """Keep when the token just written left (the write sends at once on an idle socket)."""
        if self.sent is not None:
            self.sent.append(time.perf_counter())


class FixedStreamServer:
    """Serve on 127.0.0.1 from a background thread: `with FixedStreamServer(b) as s: s.url`."""

    def __init__(self, behaviour: ServerBehaviour, *, port: int = 0) -> None:
        self._state = _State(behaviour)
        self._port = port
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    @property
    def requests(self) -> int:
        return self._state.requests

    @property
    def slow_down_bodies(self) -> list[float | None]:
        return list(self._state.slow_down_bodies)

    @property
    def curve_loads(self) -> list[int]:
        """The load each `curve` request was scheduled at, in arrival order."""
        return list(self._state.curve_loads)

    def __enter__(self) -> FixedStreamServer:
        self._thread.start()
        fut = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        fut.result(timeout=10)
        return self

    async def _start(self) -> None:
        self._server = await self._loop.create_server(
            lambda: _Protocol(self._state), "127.0.0.1", self._port
        )
        self._port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for transport in list(self._state.transports):
            transport.close()

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()


async def _serve(behaviour: ServerBehaviour, port: int) -> None:
    state = _State(behaviour)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: _Protocol(state), "127.0.0.1", port, backlog=4096)
    async with server:
        await server.serve_forever()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Fixed-stream OpenAI-compatible test server")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--tokens", type=int, default=16)
    parser.add_argument(
        "--mode", choices=["per_token", "usage_only", "no_usage"], default="per_token"
    )
    parser.add_argument("--honour-max-tokens", action="store_true")
    parser.add_argument("--ttft-ms", type=float, help="send tokens on a schedule: nominal TTFT")
    parser.add_argument("--itl-ms", type=float, default=0.0, help="nominal gap between tokens")
    parser.add_argument("--jitter", type=float, default=0.0, help="each time x 1 + U(-j, j)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--ttft-ms-per-stream",
        type=float,
        help="a latency curve (srt_bench.testing.curve): TTFT = --ttft-ms + this x streams in "
        "flight beyond --knee",
    )
    parser.add_argument("--itl-ms-per-stream", type=float, default=0.0, help="the same for ITL")
    parser.add_argument("--knee", type=int, default=0, help="streams served at the base latency")
    args = parser.parse_args(argv)
    schedule = None
    if args.ttft_ms is not None:
        schedule = TokenSchedule(
            ttft_s=args.ttft_ms / 1000.0,
            itl_s=args.itl_ms / 1000.0,
            jitter=args.jitter,
            seed=args.seed,
        )
    curve = None
    if args.ttft_ms_per_stream is not None:
        curve = LatencyCurve(
            ttft_ms=args.ttft_ms or 0.0,
            itl_ms=args.itl_ms,
            ttft_ms_per_stream=args.ttft_ms_per_stream,
            itl_ms_per_stream=args.itl_ms_per_stream,
            knee=args.knee,
        )
    behaviour = ServerBehaviour(
        mode=args.mode,
        output_tokens=args.tokens,
        honour_max_tokens=args.honour_max_tokens,
        schedule=None if curve is not None else schedule,
        curve=curve,
    )
    asyncio.run(_serve(behaviour, args.port))
