"""The sa-bench HTTP client: one streaming request in, one `RequestRecord` out.

Built on httpx (the transport benchmark in `benchmarks/client_capacity.py` decides; see the README).
Request bodies are encoded before the measurement starts so the hot loop only sends bytes, reads
chunks and stamps times.
"""

from __future__ import annotations

import itertools
import time
from typing import Literal

import httpx
import msgspec

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


class StreamClient:
    """Sends prepared requests to one endpoint and times their streams.

    `reuse_connections=False` keeps no idle connection, so each request opens its own TCP
    connection (the reference's historical per-request session behaviour).
    """

    def __init__(
        self,
        *,
        endpoint: str,
        api: Api,
        max_connections: int,
        reuse_connections: bool,
        timeout_seconds: float,
        api_key: str | None = None,
    ) -> None:
        limits = httpx.Limits(
            max_connections=max_connections,
            max_keepalive_connections=max_connections if reuse_connections else 0,
        )
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        if api_key:
            headers["authorization"] = f"Bearer {api_key}"
        self._url = endpoint.rstrip("/") + _PATHS[api]
        self._client = httpx.AsyncClient(
            limits=limits,
            timeout=httpx.Timeout(timeout_seconds, connect=min(60.0, timeout_seconds)),
            headers=headers,
            trust_env=False,
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def send(self, request: PreparedRequest, *, origin: float) -> RequestRecord:
        """Send one request; `origin` is the `perf_counter` of the measurement window start."""
        start = time.perf_counter()
        chunk_times: list[float] = []
        parts: list[str] = []
        prompt_usage: int | None = None
        completion_usage: int | None = None
        error = ""
        done = False
        try:
            async with self._client.stream("POST", self._url, content=request.body) as response:
                if response.status_code != 200:
                    raw = await response.aread()
                    error = f"HTTP {response.status_code}: {raw[:300].decode(errors='replace')}"
                else:
                    decoder = SseDecoder()
                    async for data in response.aiter_raw():
                        now = time.perf_counter()
                        for payload in decoder.feed(data):
                            if payload == DONE:
                                done = True
                                continue
                            chunk = decode_chunk(payload)
                            if chunk.error is not None:
                                error = f"server error in stream: {chunk.error}"
                            if chunk.text:
                                chunk_times.append(now)
                                parts.append(chunk.text)
                            if chunk.usage is not None:
                                if chunk.usage.prompt_tokens is not None:
                                    prompt_usage = chunk.usage.prompt_tokens
                                if chunk.usage.completion_tokens is not None:
                                    completion_usage = chunk.usage.completion_tokens
        except httpx.HTTPError as exc:
            error = f"{type(exc).__name__}: {exc}"
        except msgspec.DecodeError as exc:
            error = f"malformed stream chunk: {exc}"
        end = time.perf_counter()
        if not error and not done:
            error = "stream ended without [DONE]"
        return _record(
            request=request,
            start=start,
            end=end,
            origin=origin,
            chunk_times=chunk_times,
            text="".join(parts),
            prompt_usage=prompt_usage,
            completion_usage=completion_usage,
            error=error,
        )


def _record(
    *,
    request: PreparedRequest,
    start: float,
    end: float,
    origin: float,
    chunk_times: list[float],
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
        text=text,
    )
