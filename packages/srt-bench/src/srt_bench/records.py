"""What the client measured for one request: the only input of the statistics."""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["RequestRecord", "TokenSource"]

#: Where a request's output-token count came from: the server's `usage` block, or re-tokenizing
#: the streamed text with the model's tokenizer (only when the server sent no usage).
TokenSource = Literal["usage", "tokenizer", "none"]


class RequestRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One request as the client saw it. Times are seconds; `send_time` and `chunk_times` are
    relative to the start of the phase's measurement window."""

    success: bool
    error: str = ""
    #: Prompt tokens as the client generated/counted them.
    prompt_tokens: int
    #: Prompt tokens the server reported in `usage` (None: no usage block).
    server_prompt_tokens: int | None = None
    output_tokens: int = 0
    token_source: TokenSource = "none"
    #: Time from send to the first chunk carrying generated text; None when no chunk carried text.
    ttft: float | None = None
    #: Gaps between consecutive chunks carrying generated text.
    itls: tuple[float, ...] = ()
    #: Send to end of stream.
    latency: float = 0.0
    send_time: float = 0.0
    #: Arrival times of chunks carrying generated text (a chunk: the text events of one read).
    chunk_times: tuple[float, ...] = ()
    #: Text-carrying SSE events of each chunk (one token each when the server streams per token).
    chunk_tokens: tuple[int, ...] = ()
    text: str = ""

    @property
    def input_tokens(self) -> int:
        """The server's count when it gave one, else the client's."""
        if self.server_prompt_tokens is not None:
            return self.server_prompt_tokens
        return self.prompt_tokens
