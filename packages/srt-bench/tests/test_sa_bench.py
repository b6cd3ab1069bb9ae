"""sa-bench end to end against the fixed-stream server on 127.0.0.1 (real HTTP)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import msgspec
import pytest

from srt_bench.config import BenchRunConfig, decode_run_config
from srt_bench.errors import BenchGateError
from srt_bench.execute import run_plan
from srt_bench.runners import BuildContext, build_plan
from srt_bench.testing import FixedStreamServer, ServerBehaviour


def _config(url: str, model: Path, out: Path, **bench: Any) -> BenchRunConfig:
    benchmark: dict[str, Any] = {
        "type": "sa-bench",
        "isl": 20,
        "osl": 6,
        "concurrencies": [2, 4],
        "num_prompts_mult": 3,
        "num_warmup_mult": 1,
        "random_range_ratio": 1.0,
    }
    benchmark.update(bench)
    doc = {
        "benchmark": benchmark,
        "endpoint": url,
        "model_name": "tiny",
        "tokenizer_path": str(model),
        "total_gpus": 4,
        "output_dir": str(out),
    }
    return decode_run_config(msgspec.json.encode(doc))


def _run(config: BenchRunConfig, out: Path, window_dir: Path | None = None) -> list[str]:
    lines: list[str] = []
    plan = build_plan(config, BuildContext(out_dir=out))
    rc = run_plan(
        plan, config, out, log=lines.append, stop=threading.Event(), window_dir=window_dir
    )
    assert rc == 0
    return lines


def _result(out: Path, c: int) -> dict[str, Any]:
    path = out / "sa-bench_isl_20_osl_6" / f"results_concurrency_{c}_gpus_4.json"
    return json.loads(path.read_text())


def test_per_token_stream_counts_tokens_from_usage_and_measures_itl(
    tiny_model: Path, tmp_path: Path
) -> None:
    behaviour = ServerBehaviour(
        honour_max_tokens=True, count_prompt_tokens=True, inter_chunk_delay=0.002
    )
    windows = tmp_path / "windows"
    windows.mkdir()
    with FixedStreamServer(behaviour) as server:
        config = _config(server.url, tiny_model, tmp_path)
        _run(config, tmp_path, windows)
        # sanity + per level (warmup c, test prompt, 3c measured)
        assert server.requests == 1 + (2 + 1 + 6) + (4 + 1 + 12)
    r = _result(tmp_path, 4)
    assert r["completed"] == 12 and r["num_prompts"] == 12 and r["failed"] == 0
    assert r["input_lens"] == [20] * 12  # the server counted the same prompt tokens
    assert r["output_lens"] == [6] * 12
    assert r["total_output_tokens"] == 72
    assert r["output_token_sources"] == {"usage": 12}
    # per chunk: one gap between two arrivals; six tokens in every request however this
    # machine's reads grouped them (two events read at once are one chunk of two tokens)
    assert all(sum(tokens) == 6 for tokens in r["chunk_tokens"]), r["chunk_tokens"]
    assert [len(itl) for itl in r["itls"]] == [len(t) - 1 for t in r["chunk_tokens"]]
    assert r["p99_itl_ms"] >= 1.5  # order: the server waits 2 ms between chunks, then sends
    assert r["unmeasured_metrics"] == {}
    assert r["benchmark_outcome"]["status"] == "passed"
    assert r["request_rate"] == "inf"
    assert r["max_concurrency"] == 4
    # end = start + monotonic duration (float rounding of unix-scale numbers only)
    span = r["benchmark_end_time_unix"] - r["benchmark_start_time_unix"]
    assert abs(r["duration"] - span) < 1e-6  # order: two records of one window (not a timing)
    window = json.loads((windows / "results_concurrency_4_gpus_4.json").read_text())
    assert window["status"] == "completed"
    assert window["result_path"] == "sa-bench_isl_20_osl_6/results_concurrency_4_gpus_4.json"
    for key in ("benchmark_start_time_unix", "benchmark_end_time_unix", "duration"):
        assert window[key] == r[key]
    rollup = json.loads((tmp_path / "benchmark-rollup.json").read_text())
    assert rollup["benchmark_type"] == "sa-bench"
    assert rollup["config"] == {"model": "tiny", "isl": 20, "osl": 6}
    assert [run["concurrency"] for run in rollup["runs"]] == [2, 4]
    assert rollup["runs"][1]["total_output_tokens"] == 72
    csv_lines = (tmp_path / "benchmark-rollup.csv").read_text().splitlines()
    assert csv_lines[0].startswith("Config,Total GPU Count,Decode GPU Count,")
    assert csv_lines[2].startswith("tiny,4,4,4,4,0,4,")


def test_tokens_only_in_usage_are_counted_and_latencies_say_na(
    tiny_model: Path, tmp_path: Path
) -> None:
    """The Dynamo mocker trap: a role chunk, a final chunk, tokens only in usage."""
    with FixedStreamServer(ServerBehaviour(mode="usage_only", honour_max_tokens=True)) as server:
        lines = _run(_config(server.url, tiny_model, tmp_path), tmp_path)
    r = _result(tmp_path, 2)
    assert r["total_output_tokens"] == 36
    assert r["mean_ttft_ms"] is None and r["p99_itl_ms"] is None and r["median_tpot_ms"] is None
    assert set(r["unmeasured_metrics"]) == {"ttft", "itl", "tpot"}
    assert r["mean_e2el_ms"] > 0
    assert any("ttft n/a" in line for line in lines)


def test_without_usage_tokens_are_counted_with_the_tokenizer(
    tiny_model: Path, tmp_path: Path
) -> None:
    with FixedStreamServer(ServerBehaviour(mode="no_usage", output_tokens=5)) as server:
        _run(_config(server.url, tiny_model, tmp_path, use_chat_template=False), tmp_path)
    r = _result(tmp_path, 2)
    assert r["output_lens"] == [5] * 6
    assert r["output_token_sources"] == {"tokenizer": 6}
    assert r["input_lens"] == [20] * 6  # client-side count, no usage
    assert r["backend"] == "openai"


def test_too_many_failures_fail_the_phase_after_writing_results(
    tiny_model: Path, tmp_path: Path
) -> None:
    # Every 7th request fails: none in the 4 warmup/sanity/test requests before the first
    # measured one, then 1 of the 6 measured requests (16.7% > 5%).
    with FixedStreamServer(ServerBehaviour(fail_every=7)) as server:
        config = _config(server.url, tiny_model, tmp_path, num_warmup_mult=1)
        plan = build_plan(config, BuildContext(out_dir=tmp_path))
        with pytest.raises(BenchGateError) as err:
            run_plan(plan, config, tmp_path, log=lambda _l: None, stop=threading.Event())
    assert "concurrency 2 failed the request gate: request failure rate 16.7% (1/6)" in str(
        err.value
    )
    r = _result(tmp_path, 2)
    assert r["benchmark_outcome"]["status"] == "failed"
    assert r["errors"].count("") == 5
    assert (tmp_path / "benchmark-rollup.json").is_file()


def test_zero_output_tokens_fail_the_phase(tiny_model: Path, tmp_path: Path) -> None:
    with FixedStreamServer(ServerBehaviour(mode="usage_only", output_tokens=0)) as server:
        config = _config(server.url, tiny_model, tmp_path, num_warmup_mult=0)
        plan = build_plan(config, BuildContext(out_dir=tmp_path))
        with pytest.raises(BenchGateError, match="zero output tokens"):
            run_plan(plan, config, tmp_path, log=lambda _l: None, stop=threading.Event())


def test_poisson_rate_and_chat_api(tiny_model: Path, tmp_path: Path) -> None:
    with FixedStreamServer(ServerBehaviour()) as server:
        config = _config(
            server.url, tiny_model, tmp_path, req_rate="200", concurrencies=[2], num_warmup_mult=0
        )
        _run(config, tmp_path)
    r = _result(tmp_path, 2)
    assert r["request_rate"] == 200.0
    assert r["backend"] == "openai-chat"
    assert r["completed"] == 6


def test_slow_down_posts_before_and_clears_after_the_formal_run(
    tiny_model: Path, tmp_path: Path
) -> None:
    with (
        FixedStreamServer(ServerBehaviour()) as server,
        FixedStreamServer(ServerBehaviour()) as decode,
    ):
        base = msgspec.json.decode(
            msgspec.json.encode(
                _config(
                    server.url,
                    tiny_model,
                    tmp_path,
                    concurrencies=[2],
                    slow_down_sleep_time=0.5,
                    slow_down_wait_time=60,
                )
            )
        )
        base.update(frontend_type="sglang-router", slow_down_urls=[decode.url])
        config = decode_run_config(msgspec.json.encode(base))
        _run(config, tmp_path)
        assert decode.slow_down_bodies == [0.5, None]


def test_slow_down_auth_header_from_the_environment() -> None:
    from srt_bench.sa_bench import _slow_down_headers

    assert _slow_down_headers({"OPENAI_API_KEY": "k", "API_KEY": "raw"}) == {
        "authorization": "Bearer k"
    }
    assert _slow_down_headers({"API_KEY": "raw"}) == {"authorization": "raw"}
    assert _slow_down_headers({}) == {}


class _TickClock:
    """A monotonic clock that moves one second each time it is read (only sa-bench's
    traffic-duration check reads it, so the number of extra rounds is fixed)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def test_a_timed_profile_keeps_the_traffic_going_for_benchmark_duration_secs(
    tiny_model: Path, tmp_path: Path
) -> None:
    from srt_bench.runners import build_sa_bench_settings
    from srt_bench.sa_bench import run_sa_bench

    record = tmp_path / "profiles" / "traffic.json"
    with FixedStreamServer(ServerBehaviour()) as server:
        base = msgspec.json.decode(
            msgspec.json.encode(_config(server.url, tiny_model, tmp_path, concurrencies=[2]))
        )
        base["profiling"] = {
            "record": str(tmp_path / "profiles" / "control.jsonl"),
            "traffic_seconds": 10,
            "traffic_record": str(record),
        }
        config = decode_run_config(msgspec.json.encode(base))
        lines: list[str] = []
        run_sa_bench(
            config,
            build_sa_bench_settings(config),
            tmp_path,
            log=lines.append,
            monotonic=_TickClock(),
        )
        # sanity + warmup 2 + test prompt + 6 measured, then rounds of 6 (c=2 x 3): the clock
        # reads 1 at the start, 2 after the phases, 3..10 before each round (elapsed 2..9 < 10),
        # 11 (elapsed 10: done), 12 for the total
        phases = 1 + 2 + 1 + 6
        assert server.requests == phases + 8 * 6
    summary = json.loads(record.read_text())
    assert summary == {
        "target_seconds": 10.0,
        "phases_seconds": 1.0,
        "total_seconds": 11.0,
        "rounds": 8,
        "requests": 48,
        "failed": 0,
        "concurrency": 2,
    }
    # the extra requests are not measured: the result still has the 6 of the phase
    assert _result(tmp_path, 2)["completed"] == 6
    assert any("48 more requests in 8 round(s)" in line for line in lines)


def test_without_a_traffic_duration_no_extra_round_is_sent(
    tiny_model: Path, tmp_path: Path
) -> None:
    with FixedStreamServer(ServerBehaviour()) as server:
        config = _config(server.url, tiny_model, tmp_path, concurrencies=[2])
        _run(config, tmp_path)
        assert server.requests == 1 + 2 + 1 + 6
