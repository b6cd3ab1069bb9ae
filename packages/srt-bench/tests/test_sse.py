from __future__ import annotations

import msgspec
import pytest

from srt_bench.sse import DONE, SseDecoder, decode_chunk


def test_events_split_anywhere_are_reassembled() -> None:
    stream = b'data: {"a":1}\n\ndata: {"b":2}\n\ndata: [DONE]\n\n'
    for cut in range(1, len(stream)):
        d = SseDecoder()
        got = d.feed(stream[:cut]) + d.feed(stream[cut:]) + d.flush()
        assert got == [b'{"a":1}', b'{"b":2}', DONE], cut


def test_crlf_line_endings_and_comments() -> None:
    d = SseDecoder()
    assert d.feed(b': keep-alive\r\n\r\ndata: {"x":1}\r\n\r') == []
    assert d.feed(b"\n") == [b'{"x":1}']


def test_completion_chat_and_reasoning_text() -> None:
    assert decode_chunk(b'{"choices":[{"text":" w1"}]}').text == " w1"
    chat = decode_chunk(b'{"choices":[{"delta":{"role":"assistant","content":"hi"}}]}')
    assert chat.text == "hi"
    reasoning = decode_chunk(b'{"choices":[{"delta":{"reasoning_content":"hmm"}}]}')
    assert reasoning.text == "hmm"
    role_only = decode_chunk(b'{"choices":[{"delta":{"role":"assistant"}}],"usage":null}')
    assert (role_only.text, role_only.usage) == ("", None)


def test_usage_and_errors() -> None:
    c = decode_chunk(b'{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":9}}')
    assert c.usage is not None
    assert (c.usage.prompt_tokens, c.usage.completion_tokens) == (7, 9)
    assert decode_chunk(b'{"error":{"message":"overloaded"}}').error == "overloaded"
    assert decode_chunk(b'{"error":"bad"}').error == "bad"
    with pytest.raises(msgspec.DecodeError):
        decode_chunk(b"{not json")
