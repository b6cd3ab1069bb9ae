"""The bodies of a generation: SSE events one token each, the final events, the whole answer.

Pure. Token ``i`` is the word `` w<i mod 2000>`` of the tiny word-level vocabulary
(``examples/models/tiny-word``), so re-tokenizing the text gives back the token count. Shapes
follow the engines: OpenAI completions and chat (vLLM's field set, which SGLang shares), and
SGLang's native ``/generate`` (``text`` is the whole text so far, as SGLang streams it unless
started with ``--incremental-streaming-output``; ``meta_info`` carries the counts).
"""

from __future__ import annotations

import msgspec

from srt_runtime.standin.parse import Generation

__all__ = ["VOCABULARY", "Answer", "word"]

#: Words w0 .. w1999 of the tiny word-level vocabulary.
VOCABULARY = 2000

_enc = msgspec.json.encode


def word(i: int) -> str:
    return f" w{i % VOCABULARY}"


class Answer:
    """Everything the server writes for one generation of ``tokens`` tokens."""

    __slots__ = (
        "_created",
        "_gen",
        "_id",
        "_model",
        "_prefix",
        "_so_far",
        "_suffix",
        "kv",
        "tokens",
    )

    def __init__(
        self,
        gen: Generation,
        *,
        tokens: int,
        request_id: str,
        created: int,
        model: str,
        kv_transfer_params: dict[str, object] | None = None,
    ) -> None:
        self._gen = gen
        self.tokens = tokens
        self._id = request_id
        self._created = created
        self._model = model
        self.kv = kv_transfer_params
        self._so_far: list[str] = []  # /generate streams the whole text so far
        head = {"id": request_id, "object": self._object(stream=True), "created": created}
        head["model"] = model
        # Every token event is prefix + JSON string of the word + suffix (no per-token encode).
        opened = _enc(head)[:-1]
        if gen.kind == "chat":
            self._prefix = opened + b',"choices":[{"index":0,"delta":{"content":'
            self._suffix = b'},"logprobs":null,"finish_reason":null}]}'
        else:
            self._prefix = opened + b',"choices":[{"index":0,"text":'
            self._suffix = b',"logprobs":null,"finish_reason":null}]}'

    def _object(self, *, stream: bool) -> str:
        if self._gen.kind == "chat":
            return "chat.completion.chunk" if stream else "chat.completion"
        return "text_completion"

    def _usage(self) -> dict[str, int]:
        prompt = self._gen.prompt_tokens
        return {
            "prompt_tokens": prompt,
            "completion_tokens": self.tokens,
            "total_tokens": prompt + self.tokens,
        }

    def _meta(self, done: int, *, finished: bool) -> dict[str, object]:
        reason = {"type": "length", "length": self.tokens} if finished else None
        return {
            "id": self._gen.rid or self._id,
            "finish_reason": reason,
            "prompt_tokens": self._gen.prompt_tokens,
            "completion_tokens": done,
            "cached_tokens": 0,
        }

    def text(self, upto: int | None = None) -> str:
        return "".join(word(i) for i in range(self.tokens if upto is None else upto))

    def token_event(self, i: int) -> bytes:
        """The SSE event of token ``i`` (0-based)."""
        if self._gen.kind == "generate":
            while len(self._so_far) <= i:
                self._so_far.append(word(len(self._so_far)))
            text = "".join(self._so_far[: i + 1])
            meta = self._meta(i + 1, finished=i + 1 == self.tokens)
            return b"data: " + _enc({"text": text, "meta_info": meta}) + b"\n\n"
        if i == self.tokens - 1:
            return b"data: " + _enc(self._final_chunk(word(i))) + b"\n\n"
        if i == 0 and self._gen.kind == "chat":
            prefix = self._prefix[: -len(b'"content":')] + b'"role":"assistant","content":'
            return b"data: " + prefix + _enc(word(i)) + self._suffix + b"\n\n"
        return b"data: " + self._prefix + _enc(word(i)) + self._suffix + b"\n\n"

    def _final_chunk(self, text: str) -> dict[str, object]:
        choice: dict[str, object] = {"index": 0}
        if self._gen.kind == "chat":
            delta = {"content": text} if text else {}
            if self.tokens == 1:
                delta["role"] = "assistant"
            choice["delta"] = delta
        else:
            choice["text"] = text
        choice |= {"logprobs": None, "finish_reason": "length", "stop_reason": None}
        out: dict[str, object] = {
            "id": self._id,
            "object": self._object(stream=True),
            "created": self._created,
            "model": self._model,
            "choices": [choice],
        }
        if self.kv is not None:
            out["kv_transfer_params"] = self.kv
        return out

    def tail_events(self) -> bytes:
        """What follows the token events: a finish event when there were no tokens, the usage
        event when asked (``stream_options.include_usage``), ``[DONE]`` (not for /generate)."""
        out = b""
        if self._gen.kind == "generate":
            if self.tokens == 0:
                body = {"text": "", "meta_info": self._meta(0, finished=True)}
                out += b"data: " + _enc(body) + b"\n\n"
            return out + b"data: [DONE]\n\n"
        if self.tokens == 0:
            out += b"data: " + _enc(self._final_chunk("")) + b"\n\n"
        if self._gen.include_usage:
            usage = {
                "id": self._id,
                "object": self._object(stream=True),
                "created": self._created,
                "model": self._model,
                "choices": [],
                "usage": self._usage(),
            }
            out += b"data: " + _enc(usage) + b"\n\n"
        return out + b"data: [DONE]\n\n"

    def whole(self) -> dict[str, object]:
        """The non-streamed answer (usage always)."""
        text = self.text()
        if self._gen.kind == "generate":
            native: dict[str, object] = {"text": text}
            native["meta_info"] = self._meta(self.tokens, finished=True)
            if self.kv is not None:
                native["kv_transfer_params"] = self.kv
            return native
        choice: dict[str, object] = {"index": 0}
        if self._gen.kind == "chat":
            choice["message"] = {"role": "assistant", "content": text}
        else:
            choice["text"] = text
        choice |= {"logprobs": None, "finish_reason": "length", "stop_reason": None}
        out: dict[str, object] = {
            "id": self._id,
            "object": self._object(stream=False),
            "created": self._created,
            "model": self._model,
            "choices": [choice],
            "usage": self._usage(),
        }
        if self.kv is not None:
            out["kv_transfer_params"] = self.kv
        return out
