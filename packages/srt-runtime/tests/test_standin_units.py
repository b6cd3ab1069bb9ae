"""The stand-in engine's pure parts: the command line, request parsing, answer bodies, engine
info and metrics text."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from srt_runtime.standin.config import StandinConfig, parse_args
from srt_runtime.standin.info import build_models, build_server_info
from srt_runtime.standin.metrics import LiveStats, render_metrics
from srt_runtime.standin.parse import (
    BadRequestError,
    Generation,
    count_words,
    parse_generation,
    parse_tokenize,
    token_ids,
)
from srt_runtime.standin.responses import Answer, word
from srt_runtime.standin.server import build_startup_line


def _gen(kind: str, body: dict[str, Any], default: int = 16) -> Generation:
    return parse_generation(kind, msgspec.json.encode(body), default_max_tokens=default)  # type: ignore[arg-type]


def _config(**kw: Any) -> StandinConfig:
    base: dict[str, Any] = {"port": 6100, "served_model_name": "Qwen/Qwen3-0.6B"}
    base.setdefault("engine", "sglang")
    return StandinConfig(**(base | kw))


# --- the command line ---------------------------------------------------------------------


def test_parse_args_reads_every_flag() -> None:
    flags = (
        "--host 127.0.0.1 --port 6100 --served-model-name M --engine vllm --role prefill "
        "--bind nixl=7300 --bind kv_events=7301 --ttft-ms 12.5 --itl-ms 3 "
        "--max-tokens-default 8 --log-requests /tmp/r.jsonl --model-path /m"
    )
    config = parse_args(flags.split(" "))
    assert config.host == "127.0.0.1"
    assert (config.port, config.served_model_name, config.engine, config.role) == (
        6100,
        "M",
        "vllm",
        "prefill",
    )
    assert config.binds == (("nixl", 7300), ("kv_events", 7301))
    assert (config.ttft_ms, config.itl_ms, config.max_tokens_default) == (12.5, 3.0, 8)
    assert str(config.log_requests) == "/tmp/r.jsonl"
    assert config.model_path == "/m"


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--bind", "bootstrap"], "--bind 'bootstrap': expected NAME=PORT (PORT 1-65535)"),
        (["--bind", "bootstrap=0"], "--bind 'bootstrap=0': expected NAME=PORT (PORT 1-65535)"),
        (["--ttft-ms", "-1"], "'-1' must be >= 0"),
        (["--engine", "mocker"], "invalid choice: 'mocker'"),
        (["--max-tokens-default", "-2"], "--max-tokens-default -2: must be >= 0"),
    ],
)
def test_parse_args_refuses_bad_values(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--port", "1", "--served-model-name", "M", "--engine", "sglang"]
    if "--engine" in extra:
        argv = argv[:-2]
    with pytest.raises(SystemExit) as exc:
        parse_args(argv + extra)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_startup_line_names_engine_role_model_and_ports() -> None:
    config = _config(role="prefill")
    assert (
        build_startup_line(config, 6100, {"bootstrap": 7200})
        == "stand-in for sglang prefill 'Qwen/Qwen3-0.6B' on :6100 (also bootstrap :7200)"
    )
    assert build_startup_line(_config(engine="vllm"), 8000, {}) == (
        "stand-in for vllm agg 'Qwen/Qwen3-0.6B' on :8000"
    )


# --- request bodies -----------------------------------------------------------------------


def test_completion_counts_prompt_words_and_honours_max_tokens() -> None:
    gen = _gen(
        "completion",
        {
            "prompt": "w1 w2  w3\nw4",
            "max_tokens": 7,
            "stream": True,
            "stream_options": {"include_usage": True},
            "model": "M",
            "temperature": 0.5,
        },
    )
    assert (gen.prompt_tokens, gen.max_tokens, gen.stream, gen.include_usage) == (4, 7, True, True)
    assert gen.model == "M"
    assert _gen("completion", {"prompt": [5, 6, 7]}).prompt_tokens == 3
    assert _gen("completion", {"prompt": ["a b", "c"]}).prompt_tokens == 3
    assert _gen("completion", {"prompt": "a"}, default=16).max_tokens == 16
    assert not _gen("completion", {"prompt": "a", "stream": None}).stream


def test_chat_counts_the_concatenated_contents() -> None:
    # The stand-in model's chat template joins contents with nothing between: "a bc d".
    messages = [
        {"role": "system", "content": "a b"},
        {"role": "user", "content": [{"type": "text", "text": "c d"}, {"type": "image"}]},
    ]
    gen = _gen("chat", {"messages": messages, "max_tokens": 3, "max_completion_tokens": 5})
    assert gen.prompt_tokens == 3
    assert gen.max_tokens == 5  # max_completion_tokens wins, as in the OpenAI API


def test_generate_reads_sampling_params_and_sglang_fields() -> None:
    gen = _gen(
        "generate",
        {
            "text": "x y",
            "sampling_params": {"max_new_tokens": 9},
            "max_tokens": 1,
            "rid": "r-1",
            "bootstrap_room": 8588076336536508544,
            "bootstrap_host": "10.0.0.1",
        },
    )
    assert (gen.prompt_tokens, gen.max_tokens, gen.rid, gen.bootstrap_room) == (
        2,
        9,
        "r-1",
        8588076336536508544,
    )
    assert _gen("generate", {"input_ids": [1, 2, 3, 4]}).prompt_tokens == 4


def test_vllm_kv_transfer_params_are_kept() -> None:
    params = {"do_remote_decode": True, "remote_host": None}
    assert _gen("completion", {"prompt": "a", "kv_transfer_params": params}).kv_transfer_params == (
        params
    )


@pytest.mark.parametrize(
    "kind, body, message",
    [
        ("completion", b"{", "invalid request body: "),
        ("completion", b'{"max_tokens": 3}', "'prompt' is required"),
        ("chat", b'{"prompt": "a"}', "'messages' is required"),
        ("completion", b'{"prompt": "a", "max_tokens": -1}', "max_tokens must be >= 0, got -1"),
        ("completion", b'{"prompt": "a", "max_tokens": "3"}', "Expected `int | null`, got `str`"),
    ],
)
def test_bad_bodies_are_refused_with_the_reason(kind: str, body: bytes, message: str) -> None:
    with pytest.raises(BadRequestError, match=message.replace("|", r"\|")):
        parse_generation(kind, body, default_max_tokens=16)  # type: ignore[arg-type]


def test_token_ids_follow_the_stand_in_vocabulary() -> None:
    assert token_ids(" w0 w1999 w2000 hello w01") == [3, 2002, 0, 0, 0]
    assert parse_tokenize(b'{"prompt": "w5 w6"}') == [8, 9]
    assert parse_tokenize(b'{"messages": [{"role": "user", "content": "w1 x"}]}') == [4, 0]
    assert count_words("  a  b ") == 2


# --- answers ------------------------------------------------------------------------------


def _events(answer: Answer) -> list[dict[str, Any]]:
    raw = b"".join(answer.token_event(i) for i in range(answer.tokens)) + answer.tail_events()
    out = []
    for event in raw.split(b"\n\n"):
        if not event:
            continue
        assert event.startswith(b"data: ")
        out.append({"done": True} if event == b"data: [DONE]" else msgspec.json.decode(event[6:]))
    return out


def _answer(gen: Generation, tokens: int, kv: dict[str, object] | None = None) -> Answer:
    return Answer(
        gen, tokens=tokens, request_id="cmpl-1", created=5, model="M", kv_transfer_params=kv
    )


def test_completion_stream_is_one_word_per_event_then_usage_then_done() -> None:
    gen = _gen(
        "completion", {"prompt": "a b", "stream": True, "stream_options": {"include_usage": True}}
    )
    events = _events(_answer(gen, 3))
    assert [e["choices"][0]["text"] for e in events[:3]] == [" w0", " w1", " w2"]
    assert [e["choices"][0]["finish_reason"] for e in events[:3]] == [None, None, "length"]
    assert events[3]["choices"] == []
    assert events[3]["usage"] == {"prompt_tokens": 2, "completion_tokens": 3, "total_tokens": 5}
    assert events[4] == {"done": True}
    assert len(events) == 5
    assert {e["id"] for e in events[:4]} == {"cmpl-1"}
    assert {e["model"] for e in events[:4]} == {"M"}


def test_chat_stream_has_the_role_on_the_first_token_and_no_usage_unless_asked() -> None:
    events = _events(_answer(_gen("chat", {"messages": [], "stream": True}), 2))
    assert events[0]["choices"][0]["delta"] == {"role": "assistant", "content": " w0"}
    assert events[1]["choices"][0]["delta"] == {"content": " w1"}
    assert events[0]["object"] == "chat.completion.chunk"
    assert events[2:] == [{"done": True}]


def test_zero_tokens_still_finish_the_stream() -> None:
    gen = _gen("completion", {"prompt": "", "stream_options": {"include_usage": True}})
    events = _events(_answer(gen, 0))
    assert events[0]["choices"][0] == {
        "index": 0,
        "text": "",
        "logprobs": None,
        "finish_reason": "length",
        "stop_reason": None,
    }
    assert events[1]["usage"]["completion_tokens"] == 0


def test_words_cycle_through_the_vocabulary_and_retokenize_to_the_count() -> None:
    assert word(0) == " w0"
    assert word(2001) == " w1"
    answer = _answer(_gen("completion", {"prompt": "a"}), 2500)
    assert len(answer.text().split()) == 2500
    assert 0 not in token_ids(answer.text())


def test_whole_answers_carry_usage_and_vllm_kv_params() -> None:
    kv: dict[str, object] = {"do_remote_prefill": True, "remote_port": 7300}
    body = _answer(
        _gen("chat", {"messages": [{"role": "user", "content": "a b c"}]}), 2, kv
    ).whole()
    assert body["object"] == "chat.completion"
    assert body["choices"] == [
        {
            "index": 0,
            "message": {"role": "assistant", "content": " w0 w1"},
            "logprobs": None,
            "finish_reason": "length",
            "stop_reason": None,
        }
    ]
    assert body["usage"] == {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    assert body["kv_transfer_params"] == kv


def test_generate_streams_the_whole_text_so_far_with_meta_info() -> None:
    gen = _gen("generate", {"text": "a", "rid": "r", "stream": True})
    events = _events(_answer(gen, 2))
    assert [e["text"] for e in events[:2]] == [" w0", " w0 w1"]
    assert events[0]["meta_info"]["finish_reason"] is None
    assert events[1]["meta_info"] == {
        "id": "r",
        "finish_reason": {"type": "length", "length": 2},
        "prompt_tokens": 1,
        "completion_tokens": 2,
        "cached_tokens": 0,
    }
    assert events[2] == {"done": True}
    assert _answer(gen, 2).whole()["text"] == " w0 w1"


# --- engine info and metrics --------------------------------------------------------------


def test_models_list_exactly_the_served_name() -> None:
    body = build_models(_config(engine="vllm"), created=1)
    assert [m["id"] for m in body["data"]] == ["Qwen/Qwen3-0.6B"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "role, mode", [("agg", "null"), ("prefill", "prefill"), ("decode", "decode")]
)
def test_server_info_says_the_disaggregation_mode_and_bootstrap_port(role: str, mode: str) -> None:
    config = _config(role=role, binds=(("bootstrap", 7200),), model_path="/models/tiny")
    body = build_server_info(config, LiveStats())
    assert body["disaggregation_mode"] == mode
    assert body["disaggregation_bootstrap_port"] == 7200
    assert (body["dp_size"], body["tp_size"]) == (1, 1)
    assert body["model_path"] == "/models/tiny"
    assert body["served_model_name"] == "Qwen/Qwen3-0.6B"


def _samples(text: str) -> dict[str, str]:
    return {
        line.rsplit(" ", 1)[0]: line.rsplit(" ", 1)[1]
        for line in text.splitlines()
        if line and not line.startswith("#")
    }


def test_metrics_follow_the_live_counts_in_sglang_naming() -> None:
    stats = LiveStats()
    stats.started(prompt_tokens=100)
    stats.started(prompt_tokens=50)
    stats.emitted(10)
    samples = _samples(render_metrics("sglang", 'a"b', stats))
    label = '{model_name="a\\"b"}'
    assert samples[f"sglang:num_running_reqs{label}"] == "2"
    assert samples[f"sglang:num_queue_reqs{label}"] == "0"
    assert float(samples[f"sglang:token_usage{label}"]) == pytest.approx(160 / 1_048_576)
    assert samples[f"sglang:generation_tokens_total{label}"] == "10"
    stats.finished(110, completed=True)
    stats.finished(50, completed=False)
    samples = _samples(render_metrics("sglang", 'a"b', stats))
    assert samples[f"sglang:num_running_reqs{label}"] == "0"
    assert float(samples[f"sglang:token_usage{label}"]) == 0.0


def test_metrics_in_vllm_naming() -> None:
    stats = LiveStats()
    stats.started(prompt_tokens=4)
    text = render_metrics("vllm", "M", stats)
    samples = _samples(text)
    label = '{engine="0",model_name="M"}'
    assert samples[f"vllm:num_requests_running{label}"] == "1"
    assert samples[f"vllm:num_requests_waiting{label}"] == "0"
    assert f"vllm:gpu_cache_usage_perc{label}" in samples
    assert f"vllm:kv_cache_usage_perc{label}" in samples
    assert "# TYPE vllm:num_requests_running gauge" in text
    assert not any(name.startswith("sglang:") for name in samples)
