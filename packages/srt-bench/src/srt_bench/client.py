"""The sa-bench HTTP client: one streaming request in, one `RequestRecord` out.

Built on `http1.Pool`, our stdlib asyncio HTTP/1.1 client (`benchmarks/client_capacity.py`
measured httpx far below aiperf on this path; see the README).
Request bodies are encoded before the measurement starts so the hot loop only sends bytes, reads
chunks and stamps times.
"""

from __future__ import annotations

import itertools
import time
from typing import Literal

import msgspec

from srt_bench.http1 import HttpError, Pool, Stamps
from srt_bench.records import RequestRecord, TokenSource
from srt_bench.sse import DONE, SseDecoder, decode_chunk

__all__ = ["Api", "PreparedRequest", "StreamClient", "build_request_body"]

Api = Literal["chat", "completions"]

_PATHS: dict[Api, str] = {"chat": "/v1/chat/completions", "completions": "/v1/completions"}


class PreparedRequest(msgspec.Struct, frozen=True):
    """A request ready to send: its JSON body and the client's prompt-token count."""

    body: bytes
    prompt_tokens: int


def build_request_body(
    *,
    api: Api,
    model: str,
    prompt: str,
    max_tokens: int | None,
    ignore_eos: bool,
    extra: dict[str, object] | None = None,
) -> bytes:
    """The JSON body of one streaming request; asks for `usage` in the stream."""
    body: dict[str, object] = {"model": model, "stream": True}
    if api == "chat":
        body["messages"] = [{"role": "user", "content": prompt}]
    else:
        body["prompt"] = prompt
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
        if ignore_eos:
            # Lets engines that honour it (vLLM, SGLang, Dynamo) produce exactly max_tokens.
            body["ignore_eos"] = True
    body["stream_options"] = {"include_usage": True, "continuous_usage_stats": False}
    if extra:
        body.update(extra)
    return msgspec.json.encode(body)


class _StreamSink:
    """Decodes the SSE stream as bytes arrive and stamps every text-carrying chunk.

    A chunk is one arrival: the text-carrying SSE events that came in one read (one receive
    stamp) form one chunk, and `chunk_tokens` counts them (one token per event, as servers that
    stream per token send). So a batch of tokens that arrives at once is one ITL gap, not a gap
    followed by zero gaps (docs/telemetry-and-bench.md#metric-definitions)."""

    __slots__ = (
        "chunk_times",
        "chunk_tokens",
        "completion_usage",
        "decoder",
        "done",
        "error",
        "error_body",
        "parts",
        "prompt_usage",
        "status",
    )

    def __init__(self) -> None:
        self.status = 0
        self.decoder = SseDecoder()
        self.chunk_times: list[float] = []
        self.chunk_tokens: list[int] = []
        self.parts: list[str] = []
        self.prompt_usage: int | None = None
        self.completion_usage: int | None = None
        self.error = ""
        self.error_body = b""
        self.done = False

    def on_status(self, status: int) -> None:
        self.status = status

    def on_body(self, data: bytes, now: float) -> None:
        if self.status != 200:
            if len(self.error_body) < 300:
                self.error_body += data[:300]
            return
        try:
            payloads = self.decoder.feed(data)
            for payload in payloads:
                if payload == DONE:
                    self.done = True
                    continue
                chunk = decode_chunk(payload)
                if chunk.error is not None:
                    self.error = f"server error in stream: {chunk.error}"
                if chunk.text:
                    if self.chunk_times and self.chunk_times[-1] == now:
                        self.chunk_tokens[-1] += 1
                    else:
                        self.chunk_times.append(now)
                        self.chunk_tokens.append(1)
                    self.parts.append(chunk.text)
                usage = chunk.usage
                if usage is not None:
                    if usage.prompt_tokens is not None:
                        self.prompt_usage = usage.prompt_tokens
                    if usage.completion_tokens is not None:
                        self.completion_usage = usage.completion_tokens
        except msgspec.DecodeError as exc:
            self.error = f"malformed stream chunk: {exc}"


class StreamClient:
    """Sends prepared requests to one endpoint and times their streams.

    `reuse_connections=False` sends `Connection: close`, so each request opens its own TCP
    connection (the reference's historical per-request session behaviour). `kernel_stamps`
    (default on) times chunks by the kernel's receive time where it can (`http1_stamped`;
    `stamps` says which clock a run used).
    """

    def __init__(
        self,
        *,
        endpoint: str,
        api: Api,
        reuse_connections: bool,
        timeout_seconds: float,
        api_key: str | None = None,
        kernel_stamps: bool = True,
    ) -> None:
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._pool = Pool(
            endpoint.rstrip("/"),
            reuse=reuse_connections,
            headers=headers,
            kernel_stamps=kernel_stamps,
        )
        self._path = _PATHS[api]
        self._timeout = timeout_seconds

    @property
    def stamps(self) -> Stamps:
        """Where this client's chunk times come from: `kernel` receive times or `loop` reads."""
        return self._pool.stamps

    async def aclose(self) -> None:
        await self._pool.aclose()

    async def send(self, request: PreparedRequest, *, origin: float) -> RequestRecord:
        """Send one request; `origin` is the `perf_counter` of the measurement window start."""
        sink = _StreamSink()
        wire = self._pool.request_bytes(self._path, request.body)
        start = time.perf_counter()
        error = ""
        try:
            await self._pool.send(wire, sink, timeout=self._timeout)
        except HttpError as exc:
            error = str(exc)
        end = time.perf_counter()
        if not error:
            if sink.status != 200:
                body = sink.error_body.decode(errors="replace")
                error = f"HTTP {sink.status}: {body}"
            elif sink.error:
                error = sink.error
            elif not sink.done:
                error = "stream ended without [DONE]"
        return _record(
            request=request,
            start=start,
            end=end,
            origin=origin,
            chunk_times=sink.chunk_times,
            chunk_tokens=sink.chunk_tokens,
            text="".join(sink.parts),
            prompt_usage=sink.prompt_usage,
            completion_usage=sink.completion_usage,
            error=error,
        )


def _record(
    *,
    request: PreparedRequest,
    start: float,
    end: float,
    origin: float,
    chunk_times: list[float],
    chunk_tokens: list[int],
    text: str,
    prompt_usage: int | None,
    completion_usage: int | None,
    error: str,
) -> RequestRecord:
    source: TokenSource = "none"
    output_tokens = 0
    if completion_usage is not None:
        source, output_tokens = "usage", completion_usage
    ttft = chunk_times[0] - start if chunk_times else None
    itls = tuple(b - a for a, b in itertools.pairwise(chunk_times))
    return RequestRecord(
        success=not error,
        error=error,
        prompt_tokens=request.prompt_tokens,
        server_prompt_tokens=prompt_usage,
        output_tokens=output_tokens,
        token_source=source,
        ttft=ttft,
        itls=itls,
        latency=end - start,
        send_time=start - origin,
        chunk_times=tuple(t - origin for t in chunk_times),
        chunk_tokens=tuple(chunk_tokens),
        text=text,
    )
