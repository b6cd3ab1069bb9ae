"""The per-run dashboard's job header, diagnosis, latency part and engine metrics
(dashboard_run.py, dashboard_results.py, dashboard_latency.py, dashboard_engine.py), on the
made-up run of `srt_telemetry.testing.fake_run` and on small hand-made inputs."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import polars as pl
import pytest

from srt_telemetry.columns import frame_schema
from srt_telemetry.config import DashboardConfig
from srt_telemetry.dashboard import read_dashboard_data, render_dashboard
from srt_telemetry.dashboard_engine import read_engine_series
from srt_telemetry.dashboard_results import ResultView, build_phase, read_phases
from srt_telemetry.testing.fake_run import T0, WINDOW_GAP_S, WINDOW_S, write_fake_run

CONCURRENCIES = (1, 4, 16, 64)


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return write_fake_run(tmp_path / "job" / "logs", concurrencies=CONCURRENCIES, endpoints=3)


def _page(run: Path) -> str:
    return render_dashboard(read_dashboard_data(run, DashboardConfig()))


def _charts(html: str) -> dict[str, str]:
    found = re.findall(r'<svg[^>]*aria-label="([^"]*)".*?</svg>', html, re.S)
    return {t: s for t, s in zip(found, re.findall(r"<svg.*?</svg>", html, re.S), strict=False)}


def _svg(html: str, title: str) -> str:
    (svg,) = [s for s in re.findall(r"<svg.*?</svg>", html, re.S) if f'aria-label="{title}"' in s]
    return svg


def test_title_and_recipe_come_from_the_plan(run: Path) -> None:
    html = _page(run)
    assert "<title>fake-dsr1-disagg (job 4242)</title>" in html
    assert "<h1>fake-dsr1-disagg (job 4242)</h1>" in html
    assert (
        '<p class="recipe" id="recipe">vllm engine (decode × 3, prefill × 1 workers) · dynamo '
        "frontend · model deepseek-ai/DeepSeek-R1 (fp8) · 2 node(s) × 4 GPUs gb200 · sa-bench "
        "ISL 1024 / OSL 256 · slurm launcher</p>"
    ) in html
    assert 'id="diagnosis"' not in html  # it succeeded
    # an explicit title still wins
    titled = render_dashboard(read_dashboard_data(run, DashboardConfig(title="mine")))
    assert "<h1>mine</h1>" in titled


def test_a_failed_run_shows_its_diagnosis_first(tmp_path: Path) -> None:
    run = write_fake_run(tmp_path / "job" / "logs", concurrencies=(1, 4), failed=True)
    html = _page(run)
    box = html[html.index('<div class="failed" id="diagnosis">') :]
    assert html.index('id="diagnosis"') < html.index("<h2>Summary</h2>")
    assert box.startswith(
        '<div class="failed" id="diagnosis"><h2>This run FAILED</h2><p class="reason">'
        "decode_3_node-02 (worker decode) on node-02 exited with code 1</p>"
    )
    assert '<tr><th scope="row">exit code</th><td>1</td></tr>' in box
    assert '<a href="node-02_decode_w3.out">node-02_decode_w3.out</a>' in box
    assert "| torch.OutOfMemoryError: CUDA out of memory</pre>" in box
    assert '<th scope="row">cause</th>' not in box  # a record without the catalog's fields


def test_a_failed_run_shows_the_catalog_cause_and_fix(tmp_path: Path) -> None:
    run = write_fake_run(tmp_path / "job" / "logs", concurrencies=(1,), failed=True)
    record = json.loads((run / "diagnosis.json").read_text())
    record.update(
        cause="cuda_oom_load",
        cause_title="CUDA out of memory while loading",
        fix="Use more GPUs per worker.",
        evidence="torch.OutOfMemoryError: CUDA oom",
    )
    (run / "diagnosis.json").write_text(json.dumps(record))  # fmt: skip
    box = _page(run)
    assert (
        '<tr><th scope="row">cause</th><td>cuda_oom_load: CUDA out of memory while loading'
        "</td></tr>"
    ) in box
    assert '<tr><th scope="row">fix</th><td>Use more GPUs per worker.</td></tr>' in box


def test_without_diagnosis_the_final_status_says_it_failed(tmp_path: Path) -> None:
    run = write_fake_run(tmp_path / "job" / "logs", concurrencies=(1,), failed=True)
    (run / "diagnosis.json").unlink()
    html = _page(run)
    assert (
        '<div class="failed" id="diagnosis"><h2>This run FAILED (exit code 1)</h2>'
        "<p>decode_3_node-02 (worker decode) on node-02 exited with code 1; stage cleanup</p>"
    ) in html


def test_an_unreadable_plan_is_a_note_not_a_broken_page(run: Path) -> None:
    (run.parent / "plan.json").write_text("{")
    html = _page(run)
    assert "<h1>srt run logs</h1>" in html
    assert re.search(r"<li>[^<]*plan\.json: not shown \(", html)


def test_latency_table_has_every_percentile_and_tok_s_per_gpu_and_user(run: Path) -> None:
    html = _page(run)
    table = html[html.index('<table id="latency">') :]
    table = table[: table.index("</table>")]
    doc = json.loads(
        (run / "sa-bench_isl_1024_osl_256" / "results_concurrency_16_gpus_8.json").read_text()
    )
    row = re.search(r'<tr><th scope="row"[^>]*>c=16</th>(.*?)</tr>', table)
    assert row is not None
    cells = re.findall(r"<td>([^<]*)</td>", row.group(1))
    assert cells[0] == "160 / 0"
    assert cells[1] == f"{doc['output_throughput_per_gpu']:,.1f}"
    assert cells[2] == f"{1000 / doc['mean_tpot_ms']:,.1f}"
    expected = [
        f"{doc[f'{s}_{m}_ms']:,.{2 if m in ('tpot', 'itl') else 1}f}"
        for m in ("ttft", "tpot", "itl", "e2el")
        for s in ("p50", "p90", "p99")
    ]
    assert cells[3:] == expected
    assert [r for r in re.findall(r'scope="row"[^>]*>(c=\d+)<', table)] == [
        f"c={c}" for c in CONCURRENCIES
    ]


def test_a_percentile_the_file_lacks_is_computed_from_the_requests() -> None:
    view = ResultView(
        ttfts=(0.1, 0.2, 0.3, 0.4, 0.5, None),
        itls=((0.01, 0.03),) * 5 + ((),),
        output_lens=(3, 3, 3, 3, 3, 0),
        errors=("", "", "", "", "", "timeout"),
        mean_tpot_ms=20.0,
    )
    phase = build_phase(view, concurrency=2, label="c=2", source="x")
    assert phase.stats["ttft"]["p90"] == pytest.approx(460.0)  # linear between ranks
    assert phase.stats["tpot"]["p50"] == pytest.approx(20.0)  # (10 + 30) / (3 - 1)
    assert phase.stats["e2el"]["p99"] == pytest.approx(536.0)  # ttft + sum(itl)
    assert phase.tok_s_per_user == pytest.approx(50.0)
    assert phase.quantiles["ttft"][0] == (0.0, pytest.approx(100.0))
    assert phase.quantiles["ttft"][-1] == (0.999, pytest.approx(499.6))
    assert len(phase.quantiles["itl"]) == 201


def test_latency_charts_and_distributions_have_a_line_per_concurrency(run: Path) -> None:
    html = _page(run)
    charts = _charts(html)
    for m in ("TTFT", "TPOT", "ITL", "E2EL"):
        bars = _svg(html, f"{m} p50 / p90 / p99 (ms)")
        assert len(re.findall(r"<rect [^>]*fill=\"#[0-9a-f]+\"><title>", bars)) == 3 * 4
        dist = _svg(html, f"{m} distribution (share of requests at or below, to p99.9)")
        assert re.findall(r"<polyline[^>]*><title>([^<]*)</title>", dist) == [
            f"c={c}" for c in CONCURRENCIES
        ]
    per_gpu = _svg(html, "Output tok/s per GPU vs tok/s per user (one point per concurrency)")
    assert per_gpu.count("<circle") == 4
    # the rollup's mean/p99 bars give way to the percentile ones
    assert "TTFT (ms)" not in charts and "ITL (ms)" not in charts
    for svg in re.findall(r"<svg.*?</svg>", html, re.S):
        ET.fromstring(svg)


def test_more_concurrencies_than_colours_split_the_distributions(tmp_path: Path) -> None:
    levels = tuple(2**i for i in range(10))
    run = write_fake_run(tmp_path / "j" / "logs", concurrencies=levels, endpoints=1)
    html = _page(run)
    first = _svg(html, "TTFT distribution (share of requests at or below, to p99.9), part 1 of 2")
    second = _svg(html, "TTFT distribution (share of requests at or below, to p99.9), part 2 of 2")
    assert first.count("<polyline") == 8 and second.count("<polyline") == 2


def test_engine_metrics_per_worker_and_frontend_with_the_windows(run: Path) -> None:
    engine = read_engine_series(run)
    assert engine.source == "tachometer/final.parquet"
    assert set(engine.series) == {"kv_cache", "running", "waiting", "queue"}
    workers = ["decode_0_node-01", "decode_1_node-02", "decode_2_node-01"]
    assert list(engine.series["kv_cache"]) == workers
    # the preferred name (vllm:kv_cache_usage_perc, not the 0.5 of the older name), in %
    assert engine.used["kv_cache"]["decode_0_node-01"] == "vllm:kv_cache_usage_perc"
    assert engine.series["kv_cache"]["decode_0_node-01"][0] == (T0, pytest.approx(0.0))
    assert engine.used["running"]["frontend_0"] == "dynamo_frontend_inflight_requests"
    assert engine.used["running"]["decode_1_node-02"] == "vllm:num_requests_running"
    assert engine.frontends == {"frontend_0"}
    html = _page(run)
    running = _svg(html, "Running requests per worker")
    assert re.findall(r"<polyline[^>]*><title>([^<]*)</title>", running) == workers
    assert running.count('class="band"') == len(CONCURRENCIES)
    assert re.findall(r'class="bl">(c=\d+)</text>', running) == [f"c={c}" for c in CONCURRENCIES]
    front = _svg(html, "Running requests per frontend")
    assert re.findall(r"<polyline[^>]*><title>([^<]*)</title>", front) == ["frontend_0"]
    # the first window starts WINDOW_GAP_S after the first sample: seconds since it
    band = re.search(r'<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"[^>]*class="band"', front)
    assert band is not None
    assert "vllm:num_requests_running" in html[html.index('aria-label="Running requests') :]
    assert WINDOW_S > WINDOW_GAP_S


def test_label_sets_of_one_endpoint_are_summed_per_scrape(tmp_path: Path) -> None:
    run = tmp_path / "logs"
    (run / "tachometer").mkdir(parents=True)
    schema = frame_schema(())
    rows = [
        ("decode_0", 'sglang:num_running_reqs{dp_rank="0"}', 3.0, 1_000_000_000),
        ("decode_0", 'sglang:num_running_reqs{dp_rank="1"}', 4.0, 1_000_000_000),
        ("decode_0", 'sglang:token_usage{dp_rank="0"}', 0.2, 1_000_000_000),
        ("decode_0", 'sglang:token_usage{dp_rank="1"}', 0.4, 1_000_000_000),
        ("decode_0", 'sglang:num_running_reqs{dp_rank="0"}', 5.0, 2_000_000_000),
    ]
    frame = pl.DataFrame(
        {
            "scraper_endpoint": [r[0] for r in rows],
            "metric_name": [r[1] for r in rows],
            "metric_value": [r[2] for r in rows],
            "histogram_bucket_lower": [None] * 5,
            "histogram_bucket_upper": [None] * 5,
            "histogram_sum": [None] * 5,
            "histogram_count": [None] * 5,
            "time_since_start": [0.0] * 5,
            "timestamp_ns": [r[3] for r in rows],
        },
        schema=schema,
    )  # no metric_name_clean column: a compacted local segment
    frame.write_parquet(run / "tachometer" / "final.parquet")
    engine = read_engine_series(run)
    assert engine.series["running"] == {"decode_0": [(1.0, 7.0), (2.0, 5.0)]}
    assert engine.series["kv_cache"] == {"decode_0": [(1.0, pytest.approx(30.0))]}
    assert "waiting" not in engine.series


def test_without_results_or_metrics_the_page_keeps_the_rollup_charts(tmp_path: Path) -> None:
    run = tmp_path / "logs"
    run.mkdir()
    (run / "benchmark-rollup.json").write_text(
        json.dumps(
            {
                "benchmark_type": "sa-bench",
                "runs": [{"concurrency": 4, "ttft_mean_ms": 1.0, "itl_mean_ms": 0.5}],
            }
        )
    )
    html = _page(run)
    assert "No per-request results" in html and 'id="engine"' not in html
    assert {"TTFT (ms)", "ITL (ms)"} <= set(_charts(html))
    assert "no Tachometer final.parquet: engine metrics not shown" in html


def test_an_odd_result_file_is_named_and_skipped(run: Path) -> None:
    bad = run / "sa-bench_isl_1024_osl_256" / "results_concurrency_2_gpus_8.json"
    bad.write_text('{"ttfts": "not a list"}')
    phases, notes = read_phases(run)
    assert [p.concurrency for p in phases] == list(CONCURRENCIES)
    assert len(notes) == 1 and notes[0].startswith(f"{bad}: not shown (Expected `array`")
    assert _page(run) == _page(run)  # and the page is the same bytes every time


def test_the_engine_section_counts_scrapes_per_window_and_says_when_a_window_got_too_few() -> None:
    from srt_telemetry.dashboard_engine import EngineSeries, window_scrapes, window_scrapes_html

    engine = EngineSeries(
        scrapes={"a": [1.0 + i / 100 for i in range(30)], "b": [1.0, 1.5, 2.0, 3.5]},
        interval_ms=1000,
        window_samples=10,
    )
    windows = [(1.0, 1.2, "c=4"), (3.0, 4.0, "c=16")]
    # the fewest of any endpoint, start and end included: b has 1 in c=4, a none in c=16
    assert window_scrapes(engine, windows) == [("c=4", pytest.approx(0.2), 1), ("c=16", 1.0, 0)]
    html = window_scrapes_html(engine, windows)
    assert "endpoint): c=4: 1, c=16: 0; window sampling" in html
    assert (
        "Fewer than 10 scrapes in c=4 (0.20 s): 1; c=16 (1.00 s): 0: the engine curves cannot "
        "show how the engine moved in those windows; the scraper samples each window densely, "
        "so those windows lasted less than 100 ms or the scrapes were slow." in html
    )
    fixed = EngineSeries(scrapes=engine.scrapes, interval_ms=1000)
    assert "set it to at most 20 ms, or leave it unset" in window_scrapes_html(fixed, windows)
    dense = EngineSeries(scrapes={"a": [1.0 + i / 100 for i in range(300)]}, window_samples=10)
    assert "engine-scrapes-short" not in window_scrapes_html(dense, windows)
    assert window_scrapes_html(EngineSeries(), windows) == ""
