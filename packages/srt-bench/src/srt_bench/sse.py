"""Server-sent events from OpenAI-compatible streaming responses (pure, incremental).

Only `data:` fields matter for these servers; events end with a blank line. Chunks from the socket
may split an event anywhere, so bytes are buffered until an event is complete.
"""

from __future__ import annotations

import msgspec

__all__ = ["DONE", "SseDecoder", "StreamChunk", "Usage", "decode_chunk"]

#: The payload that ends an OpenAI stream.
DONE = b"[DONE]"


class Usage(msgspec.Struct, frozen=True):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


class _Delta(msgspec.Struct, frozen=True):
    content: str | None = None
    reasoning_content: str | None = None


class _Choice(msgspec.Struct, frozen=True):
    text: str | None = None
    delta: _Delta | None = None


class _Error(msgspec.Struct, frozen=True):
    message: str = ""


class _Chunk(msgspec.Struct, frozen=True):
    choices: list[_Choice] = []
    usage: Usage | None = None
    error: _Error | str | None = None


class StreamChunk(msgspec.Struct, frozen=True):
    """What one event carried: generated text (completions `text`, chat `content` or
    `reasoning_content`), usage, or an error message."""

    text: str
    usage: Usage | None
    error: str | None


_decoder = msgspec.json.Decoder(_Chunk)


def decode_chunk(payload: bytes) -> StreamChunk:
    """Decode one `data:` payload; a malformed one raises `msgspec.DecodeError`."""
    chunk = _decoder.decode(payload)
    parts: list[str] = []
    for choice in chunk.choices:
        if choice.text:
            parts.append(choice.text)
        if choice.delta is not None:
            if choice.delta.reasoning_content:
                parts.append(choice.delta.reasoning_content)
            if choice.delta.content:
                parts.append(choice.delta.content)
    error: str | None = None
    if isinstance(chunk.error, _Error):
        error = chunk.error.message or "error"
    elif isinstance(chunk.error, str):
        error = chunk.error
    return StreamChunk(text="".join(parts), usage=chunk.usage, error=error)


class SseDecoder:
    """Feed raw bytes, get back the complete `data:` payloads seen so far."""

    __slots__ = ("_buffer",)

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, data: bytes) -> list[bytes]:
        buffer = self._buffer + data if self._buffer else data
        if b"\r" in buffer:
            buffer = buffer.replace(b"\r\n", b"\n")
        events = buffer.split(b"\n\n")
        self._buffer = events.pop()
        out: list[bytes] = []
        for event in events:
            for line in event.split(b"\n"):
                if line.startswith(b"data:"):
                    out.append(line[5:].strip())
        return out

    def flush(self) -> list[bytes]:
        """Payloads of a final event that was not followed by a blank line."""
        rest, self._buffer = self._buffer, b""
        return [line[5:].strip() for line in rest.split(b"\n") if line.startswith(b"data:")]
