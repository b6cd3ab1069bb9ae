"""ITL per chunk (issue 31 item 2): the text events of one arrival are one chunk with a token
count, so a batch of tokens that arrives at once is one gap, never a gap and then zero gaps."""

from __future__ import annotations

from srt_bench.client import PreparedRequest, _record, _StreamSink
from srt_bench.records import RequestRecord
from srt_bench.results import build_result
from srt_bench.stats import build_phase_metrics


def _event(text: str) -> bytes:
    return b'data: {"choices":[{"text":"' + text.encode() + b'"}]}\n\n'


USAGE = b'data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":4}}\n\n'


def _streamed() -> RequestRecord:
    sink = _StreamSink()
    sink.on_status(200)
    sink.on_body(_event(" a"), 1.0)  # one token
    sink.on_body(_event(" b") + _event(" c") + _event(" d"), 1.5)  # three in one read
    sink.on_body(USAGE + b"data: [DONE]\n\n", 1.6)
    return _record(
        request=PreparedRequest(body=b"{}", prompt_tokens=1),
        start=0.5,
        end=1.6,
        origin=0.0,
        chunk_times=sink.chunk_times,
        chunk_tokens=sink.chunk_tokens,
        text="".join(sink.parts),
        prompt_usage=sink.prompt_usage,
        completion_usage=sink.completion_usage,
        error="",
    )


def test_the_events_of_one_arrival_are_one_chunk_and_one_gap() -> None:
    record = _streamed()
    assert record.text == " a b c d"
    assert record.chunk_times == (1.0, 1.5)
    assert record.chunk_tokens == (1, 3)
    assert record.itls == (0.5,)  # not (0.5, 0.0, 0.0)
    assert record.output_tokens == 4


def test_the_result_file_keeps_chunk_tokens_and_names_the_itl_definition() -> None:
    record = _streamed()
    metrics = build_phase_metrics([record], duration=1.6, total_gpus=1, percentiles=(50.0,))
    result = build_result(
        header={"max_concurrency": 1, "request_rate": 1.0},
        metrics=metrics,
        records=[record],
        percentiles=(50.0,),
        start_unix=0.0,
        end_unix=1.6,
        reuse_http_connections=False,
        requested_num_prompts=1,
    )
    assert result.chunk_tokens == [[1, 3]]
    assert result.itl_definition == "per-chunk"
    assert result.p50_itl_ms == 500.0  # the one gap; p50 of a per-event ITL would be 0.0
    assert result.tpots is not None and result.tpots[0] is not None
    assert abs(result.tpots[0] - (1.1 - 0.5) / 3) < 1e-12
