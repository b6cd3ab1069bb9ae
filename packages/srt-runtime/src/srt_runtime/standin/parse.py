"""Decode a generation request body (OpenAI completions or chat, SGLang ``/generate``).

Pure. Only the fields that shape the answer are read; every other field is accepted and
ignored, as an engine would ignore a sampling option that changes nothing here. Prompt tokens
are counted with the word-level vocabulary of ``examples/models/tiny-word``: the
whitespace-separated words of the prompt (chat: of the concatenated message contents), or the
length of a token-id prompt.
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = [
    "BadRequestError",
    "Generation",
    "Kind",
    "count_words",
    "parse_generation",
    "parse_tokenize",
    "token_ids",
]

Kind = Literal["completion", "chat", "generate"]


class BadRequestError(ValueError):
    """The body is not a request this endpoint can answer (HTTP 400)."""


class _StreamOptions(msgspec.Struct):
    include_usage: bool | None = None


class _Sampling(msgspec.Struct):
    max_new_tokens: int | None = None


class _Body(msgspec.Struct):
    model: str | None = None
    prompt: object = None
    messages: list[dict[str, object]] | None = None
    text: object = None
    input_ids: object = None
    max_tokens: int | None = None
    max_completion_tokens: int | None = None
    sampling_params: _Sampling | None = None
    stream: bool | None = None
    stream_options: _StreamOptions | None = None
    rid: object = None
    kv_transfer_params: dict[str, object] | None = None
    bootstrap_room: object = None


class Generation(msgspec.Struct, frozen=True, kw_only=True):
    kind: Kind
    model: str | None
    stream: bool
    include_usage: bool
    #: Tokens to generate (exactly this many, as with ``ignore_eos``).
    max_tokens: int
    prompt_tokens: int
    #: SGLang's request id (``rid``), echoed in ``meta_info.id``.
    rid: str | None
    #: vLLM's NIXL handshake parameters (a PD prefill answers with its own).
    kv_transfer_params: dict[str, object] | None
    #: Present when an SGLang PD router paired this request with a prefill or a decode.
    bootstrap_room: int | None


_decoder = msgspec.json.Decoder(_Body)


def count_words(value: object) -> int:
    """Tokens of a prompt: words of a string, ids of a token list, the sum over a batch."""
    if isinstance(value, str):
        return len(value.split())
    if isinstance(value, list):
        if all(isinstance(v, int) for v in value):
            return len(value)
        return sum(count_words(v) for v in value)
    return 0


def _message_text(messages: list[dict[str, object]]) -> str:
    """The message contents joined as they are (the stand-in model's chat template
    concatenates them with nothing between)."""
    texts: list[str] = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    texts.append(part["text"])
    return "".join(texts)


def _max_tokens(kind: Kind, body: _Body, default: int) -> int:
    if kind == "generate":
        given = body.sampling_params.max_new_tokens if body.sampling_params else None
    else:
        given = body.max_completion_tokens
        if given is None:
            given = body.max_tokens
    value = default if given is None else given
    if value < 0:
        raise BadRequestError(f"max_tokens must be >= 0, got {value}")
    return value


def parse_generation(kind: Kind, raw: bytes, *, default_max_tokens: int) -> Generation:
    """The generation ``raw`` asks for; raises ``BadRequestError`` naming what is wrong."""
    try:
        body = _decoder.decode(raw)
    except msgspec.DecodeError as exc:
        raise BadRequestError(f"invalid request body: {exc}") from exc
    match kind:
        case "completion":
            if body.prompt is None:
                raise BadRequestError("'prompt' is required")
            prompt = count_words(body.prompt)
        case "chat":
            if body.messages is None:
                raise BadRequestError("'messages' is required")
            prompt = count_words(_message_text(body.messages))
        case "generate":
            prompt = count_words(body.input_ids if body.input_ids is not None else body.text)
    room = body.bootstrap_room
    return Generation(
        kind=kind,
        model=body.model,
        stream=bool(body.stream),
        include_usage=bool(body.stream_options and body.stream_options.include_usage),
        max_tokens=_max_tokens(kind, body, default_max_tokens),
        prompt_tokens=prompt,
        rid=body.rid if isinstance(body.rid, str) else None,
        kv_transfer_params=body.kv_transfer_params,
        bootstrap_room=room if isinstance(room, int) and not isinstance(room, bool) else None,
    )


#: Ids of the stand-in vocabulary: ``<unk>``, ``<s>``, ``</s>``, then ``w0`` .. ``w1999``.
_FIRST_WORD_ID = 3
_VOCABULARY = 2000


def token_ids(text: str) -> list[int]:
    """The ids of ``text``'s words (``w<k>`` is ``3 + k``; any other word is ``<unk>``, 0)."""
    out: list[int] = []
    for word in text.split():
        k = word[1:]
        ok = word.startswith("w") and k.isdigit() and (k == "0" or not k.startswith("0"))
        out.append(_FIRST_WORD_ID + int(k) if ok and int(k) < _VOCABULARY else 0)
    return out


def parse_tokenize(raw: bytes) -> list[int]:
    """The token ids ``/tokenize`` answers for ``{"prompt": ...}`` or ``{"messages": [...]}``."""
    try:
        body = _decoder.decode(raw)
    except msgspec.DecodeError as exc:
        raise BadRequestError(f"invalid request body: {exc}") from exc
    if body.messages is not None:
        return token_ids(_message_text(body.messages))
    if isinstance(body.prompt, str):
        return token_ids(body.prompt)
    if isinstance(body.prompt, list) and all(isinstance(t, int) for t in body.prompt):
        return [int(t) for t in body.prompt]
    raise BadRequestError("'prompt' (a string or token ids) or 'messages' is required")
