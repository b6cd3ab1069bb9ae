from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from srt_bench.errors import BenchDatasetError
from srt_bench.rollup import (
    CSV_COLUMNS,
    GpuCounts,
    build_aiperf_runs,
    build_rollup_csv,
    build_sa_bench_rollup,
    build_sa_bench_run,
    format_csv_number,
    nearest_rank,
    read_running_requests,
    read_sa_bench_results,
    sglang_result_as_sa_bench,
    write_rollup,
)
from srt_schema.bench_result import BenchResult


def _result(c: int, **over: object) -> BenchResult:
    doc: dict[str, object] = {
        "model_id": "m",
        "max_concurrency": c,
        "output_throughput": 812.4,
        "request_throughput": 0.79,
        "mean_ttft_ms": 410.2,
        "median_ttft_ms": 400.0,
        "p99_ttft_ms": 980.0,
        "mean_tpot_ms": 4.1,
        "median_tpot_ms": 4.0,
        "p99_tpot_ms": 5.2,
        "mean_itl_ms": 4.0,
        "median_itl_ms": 3.9,
        "p99_itl_ms": 9.8,
        "mean_e2el_ms": 4600.0,
        "completed": 40,
        "total_input_tokens": 327680,
        "total_output_tokens": 40960,
        "total_token_throughput": 7000.0,
    }
    doc.update(over)
    return msgspec.convert(doc, BenchResult)


def test_run_fields_follow_the_reference_names() -> None:
    run = msgspec.to_builtins(build_sa_bench_run(_result(4)))
    assert {k: run[k] for k in list(run)[:13]} == {
        "concurrency": 4,
        "throughput_toks": 812.4,
        "request_throughput": 0.79,
        "ttft_mean_ms": 410.2,
        "ttft_p99_ms": 980.0,
        "tpot_mean_ms": 4.1,
        "tpot_p99_ms": 5.2,
        "itl_mean_ms": 4.0,
        "itl_p99_ms": 9.8,
        "e2el_mean_ms": 4600.0,
        "completed_requests": 40,
        "total_input_tokens": 327680,
        "total_output_tokens": 40960,
    }


def test_sglang_result_lines_read_as_sa_bench_results() -> None:
    line = {
        "max_concurrency": 2,
        "p99_ttft_ms": 7.5,
        "mean_e2e_latency_ms": 9.0,
        "total_input": 11,
        "total_throughput": 5.0,
        "input_lens": [[1, 2]],  # theirs, not read
    }
    run = build_sa_bench_run(sglang_result_as_sa_bench(line, model="m"))
    assert (run.concurrency, run.ttft_p99_ms, run.e2el_mean_ms) == (2, 7.5, 9.0)
    assert (run.total_input_tokens, run.total_token_throughput) == (11, 5.0)
    with pytest.raises(BenchDatasetError, match=r"got `str` - at `\$.p99_ttft_ms`"):
        sglang_result_as_sa_bench({"p99_ttft_ms": "slow"}, model="m")


def test_a_result_file_that_does_not_decode_is_refused_naming_the_field(tmp_path: Path) -> None:
    path = tmp_path / "sa-bench_isl_1_osl_1" / "results_concurrency_4_gpus_1.json"
    path.parent.mkdir()
    path.write_text('{"max_concurrency": 4, "mean_ttft_ms": "fast"}')
    with pytest.raises(BenchDatasetError) as exc:
        read_sa_bench_results(tmp_path)
    assert str(exc.value) == (
        f"{path}: not an sa-bench result: Expected `float | null`, got `str` - at `$.mean_ttft_ms`"
    )


def test_rollup_is_sorted_by_concurrency() -> None:
    rollup = build_sa_bench_rollup(
        [_result(16), _result(4)], isl=8192, osl=1024, timestamp="2026-08-21T12:00:00.000000Z"
    )
    assert rollup.benchmark_type == "sa-bench"
    assert rollup.timestamp == "2026-08-21T12:00:00.000000Z"
    assert msgspec.to_builtins(rollup.config) == {"model": "m", "isl": 8192, "osl": 1024}
    assert [r.concurrency for r in rollup.runs] == [4, 16]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, ""),
        (3, "3"),
        (1.23456, "1.235"),
        (2.5, "2.5"),
        (4.0, "4"),
        (0.0004, "0"),
        (float("nan"), ""),
    ],
)
def test_csv_numbers(value: object, text: str) -> None:
    assert format_csv_number(value) == text


def test_csv_for_an_aggregated_deployment() -> None:
    rollup = build_sa_bench_rollup([_result(4)], isl=1, osl=1, timestamp="t")
    text = build_rollup_csv(rollup, config_name="job", gpus=GpuCounts(total=8), p90_running=12.0)
    header, row = text.splitlines()
    assert header == ",".join(CSV_COLUMNS)
    # per user = 1000 / 4.0 ms; per GPU = 7000 / 8; P90 running only for disaggregated runs
    assert row == "job,8,8,8,8,0,4,7000,812.4,400,4,3.9,,250,875"


def test_csv_for_a_disaggregated_deployment() -> None:
    rollup = build_sa_bench_rollup([_result(4)], isl=1, osl=1, timestamp="t")
    gpus = GpuCounts(total=16, prefill=4, decode=8)
    row = build_rollup_csv(rollup, config_name="job", gpus=gpus, p90_running=12.0).splitlines()[1]
    assert row == "job,16,8,12,8,4,4,7000,812.4,400,4,3.9,12,250,583.333"


def test_running_requests_from_decode_logs(tmp_path: Path) -> None:
    (tmp_path / "n1_decode_w0.out").write_text("x #running-req: 3 y\n#running-req: 10\n")
    (tmp_path / "n1_prefill_w0.out").write_text("#running-req: 99\n")
    values = read_running_requests(tmp_path)
    assert sorted(values) == [3.0, 10.0]
    assert nearest_rank([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90) == 9
    assert nearest_rank([5.0], 90) == 5.0
    assert nearest_rank([], 90) is None


def test_aiperf_exports_map_to_the_same_schema() -> None:
    export = {
        "request_throughput": {"avg": 10.0},
        "output_token_throughput": {"avg": 640.0},
        "time_to_first_token": {"avg": 50.0, "p99": 90.0, "p50": 45.0},
        "inter_token_latency": {"avg": 5.0, "p99": 8.0, "p50": 4.5},
        "request_latency": {"avg": 400.0},
        "request_count": {"avg": 100},
        "total_isl": {"avg": 12800},
        "total_osl": {"avg": 6400},
        "total_token_throughput": {"avg": 1920.0},
    }
    (run,) = build_aiperf_runs({8: export})
    assert run.concurrency == 8
    assert run.throughput_toks == 640.0
    assert run.tpot_mean_ms == run.itl_mean_ms == 5.0  # TPOT := ITL, as the reference
    assert run.completed_requests == 100
    assert (run.total_input_tokens, run.total_output_tokens) == (12800, 6400)


def test_a_rollup_its_readers_could_not_decode_is_not_written(tmp_path: Path) -> None:
    rollup = build_sa_bench_rollup([_result(4)], isl=1, osl=1, timestamp="t")
    (run,) = rollup.runs
    rollup = msgspec.structs.replace(
        rollup, runs=(msgspec.structs.replace(run, ttft_mean_ms="fast"),)
    )
    with pytest.raises(BenchDatasetError) as exc:
        write_rollup(tmp_path, rollup, None)
    assert str(exc.value) == (
        f"{tmp_path / 'benchmark-rollup.json'}: not written, the results do not fit it: "
        "Expected `float | null`, got `str` - at `$.runs[0].ttft_mean_ms`"
    )
    assert not (tmp_path / "benchmark-rollup.json").exists()
