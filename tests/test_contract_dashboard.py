"""Contract: the files the per-run dashboard reads from other packages decode in srt-telemetry's
own view structs (srt-telemetry imports no other srt package, so it keeps subsets).

- `plan.json` (srt-planner's JobPlan): every golden plan -> `dashboard_run.JobView`;
- `diagnosis.json` (srt-runtime's DiagnosisRecord) -> `dashboard_run.DiagnosisView`;
- `status.json` (srt-runtime's StatusEvent) -> `dashboard_run.StatusView`;
- an sa-bench result file (srt-bench's build_result) -> `dashboard_results.ResultView`.

A renamed or retyped field fails here instead of leaving a blank on the page.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import msgspec
import pytest

from srt_bench.records import RequestRecord
from srt_bench.results import build_result, encode_result
from srt_bench.stats import build_phase_metrics
from srt_runtime.diagnosis import Failure, build_diagnosis_record
from srt_runtime.status import StatusEvent
from srt_schema.bench_result import BenchResult, decode_bench_result
from srt_telemetry.dashboard_results import ResultView, build_phase
from srt_telemetry.dashboard_run import DiagnosisView, JobView, StatusView

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = sorted((ROOT / "packages" / "srt-planner" / "tests" / "golden").glob("*/job/plan.json"))


def test_there_are_golden_plans() -> None:
    assert len(GOLDEN) >= 30


@pytest.mark.parametrize("path", GOLDEN, ids=[p.parent.parent.name for p in GOLDEN])
def test_every_golden_plan_decodes_as_the_dashboard_job_view(path: Path) -> None:
    raw = json.loads(path.read_text())
    view = msgspec.json.decode(path.read_bytes(), type=JobView)
    assert (view.job_id, view.job_name, view.launcher) == (
        raw["job_id"],
        raw["job_name"],
        raw["launcher"],
    )
    assert view.nodes == tuple(raw["nodes"])
    summary = raw.get("summary")
    if summary is not None:
        assert view.summary is not None
        assert msgspec.structs.asdict(view.summary) == {
            k: summary[k] for k in msgspec.structs.asdict(view.summary)
        }


def test_the_runtime_diagnosis_decodes_as_the_dashboard_view(tmp_path: Path) -> None:
    log = tmp_path / "node-01_decode_w0.out"
    failure = Failure(
        what="decode_0_node-01",
        node="node-01",
        exit_code=3,
        log_line="CUDA error",
        log_path=str(log),
        reason="decode_0_node-01 exited with code 3",
        detected_at=1.0,
    )
    record = build_diagnosis_record(failure, ["a", "CUDA error", "b"], tmp_path)
    view = msgspec.json.decode(msgspec.json.encode(record), type=DiagnosisView)
    assert msgspec.structs.asdict(view) == msgspec.structs.asdict(record)
    assert view.log_file == "node-01_decode_w0.out"


def test_the_runtime_status_decodes_as_the_dashboard_view() -> None:
    event = StatusEvent(
        job_id="1", status="failed", stage="cleanup", message="m", exit_code=1, at="t"
    )
    view = msgspec.json.decode(msgspec.json.encode(event), type=StatusView)
    assert (view.status, view.stage, view.message, view.exit_code) == ("failed", "cleanup", "m", 1)


def test_an_sa_bench_result_file_decodes_as_the_dashboard_view() -> None:
    records = [
        RequestRecord(
            success=True,
            prompt_tokens=8,
            output_tokens=3,
            token_source="usage",
            ttft=0.1 * (i + 1),
            itls=(0.01, 0.02),
            latency=0.1 * (i + 1) + 0.03,
        )
        for i in range(4)
    ] + [RequestRecord(success=False, error="boom", prompt_tokens=8)]
    percentiles = (50.0, 90.0, 99.0)
    metrics = build_phase_metrics(records, duration=2.0, total_gpus=2, percentiles=percentiles)
    doc = build_result(
        header={"max_concurrency": 4, "total_gpus": 2, "isl": 8, "osl": 3, "request_rate": 1.0},
        metrics=metrics,
        records=records,
        percentiles=percentiles,
        start_unix=100.0,
        end_unix=102.0,
        reuse_http_connections=False,
        requested_num_prompts=5,
    )
    data = encode_result(doc, metrics)  # the bytes sa-bench writes
    assert decode_bench_result(data) == doc  # the one decoder reads back what was written
    view = msgspec.json.decode(data, type=ResultView)
    # the dashboard's own view (srt-telemetry installs alone) holds every field it shares with
    # the one definition equal
    shared = set(ResultView.__struct_fields__) & set(BenchResult.__struct_fields__)
    assert shared == set(ResultView.__struct_fields__), "a view field the writer never writes"
    for name in sorted(shared):
        ours, theirs = getattr(view, name), getattr(doc, name)
        if isinstance(theirs, list):
            theirs = tuple(tuple(v) if isinstance(v, list) else v for v in theirs)
        assert ours == theirs, name
    assert view.max_concurrency == 4 and view.total_gpus == 2
    assert (view.benchmark_start_time_unix, view.benchmark_end_time_unix) == (100.0, 102.0)
    assert len(view.ttfts) == len(view.itls) == len(view.errors) == 5
    phase = build_phase(view, concurrency=4, label="c=4", source="x.json")
    # the failed request is left out of the distributions
    ttft = phase.quantiles["ttft"]
    assert ttft[0][1] == pytest.approx(100.0) and ttft[-1][1] == pytest.approx(399.7)


def test_the_dashboards_percentile_is_the_one_percentile() -> None:
    """srt-telemetry cannot import srt-schema; its percentile must still be the same function."""
    from srt_schema.bench_result import percentile as one
    from srt_telemetry.dashboard_results import percentile as dashboards

    rng = random.Random(31)
    for n in (1, 2, 3, 10, 101):
        values = sorted(rng.uniform(0.0, 5.0) for _ in range(n))
        for p in (0.0, 1.0, 50.0, 90.0, 99.0, 99.9, 100.0):
            assert dashboards(values, p / 100.0) == pytest.approx(one(values, p)), (n, p)


def test_the_dashboard_says_which_itl_definition_its_numbers_use() -> None:
    from srt_telemetry.dashboard_latency import latency_table_html

    record = RequestRecord(
        success=True,
        prompt_tokens=8,
        output_tokens=4,
        token_source="usage",
        ttft=0.1,
        itls=(0.02, 0.03),
        latency=0.16,
        chunk_times=(0.1, 0.12, 0.15),
        chunk_tokens=(1, 2, 1),
    )
    metrics = build_phase_metrics([record], duration=1.0, total_gpus=1, percentiles=(50.0,))
    doc = build_result(
        header={"max_concurrency": 1, "request_rate": 1.0},
        metrics=metrics,
        records=[record],
        percentiles=(50.0,),
        start_unix=0.0,
        end_unix=1.0,
        reuse_http_connections=False,
        requested_num_prompts=1,
    )
    view = msgspec.json.decode(encode_result(doc, metrics), type=ResultView)
    phase = build_phase(view, concurrency=1, label="c=1", source="x.json")
    assert phase.itl_definition == "per-chunk"
    assert phase.stats["itl"]["p50"] == pytest.approx(25.0)  # > 0: gaps between arrivals
    page = latency_table_html([phase])
    assert "ITL per chunk (ms)" in page
    assert "ITL is per chunk (the vLLM/aiperf convention)" in page
    assert "TPOT is per token: (E2EL − TTFT) / (output tokens − 1)" in page
