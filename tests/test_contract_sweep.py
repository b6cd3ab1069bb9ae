"""Contract: the files the sweep report reads decode in srt-telemetry's own views.

`sweep.json` is defined once by srt_schema.sweep_record (srtctl apply writes it, the runtime and
srtctl compare read it); `benchmark-rollup.json`'s `validity` by srt_schema.rollup. srt-telemetry,
installed alone, keeps views of both (srt_telemetry.sweep_view): a renamed or retyped field
fails here.
"""

from __future__ import annotations

import msgspec

from srt_schema.rollup import Rollup, RollupConfig, RollupRun, Validity, ValidityReason
from srt_schema.sweep_record import SweepPoint, SweepRecord, encode_sweep_record
from srt_telemetry.sweep_view import SweepRecordView, _Rollup, run_wide_reasons


def test_sweep_record_decodes_in_the_telemetry_view() -> None:
    record = SweepRecord(
        name="qs-1",
        source="qs.yaml",
        created_at="20261202T000000Z",
        points=(
            SweepPoint(
                index=0,
                job_name="qs_ratio5",
                params={"ratio": 5},
                configuration="ratio=5",
                recipe_sha256="0" * 64,
                job_id="local-1",
            ),
        ),
    )
    view = msgspec.json.decode(encode_sweep_record(record), type=SweepRecordView)
    assert view.name == "qs-1"
    assert view.jobs_base == record.jobs_base
    [point] = view.points
    assert (point.index, point.job_name, point.params, point.configuration, point.job_id) == (
        0,
        "qs_ratio5",
        {"ratio": 5},
        "ratio=5",
        "local-1",
    )


def _run(concurrency: int, validity: Validity) -> RollupRun:
    return RollupRun(
        concurrency=concurrency,
        throughput_toks=100.0,
        request_throughput=1.0,
        ttft_mean_ms=1.0,
        ttft_p99_ms=2.0,
        tpot_mean_ms=1.0,
        tpot_p99_ms=2.0,
        itl_mean_ms=1.0,
        itl_p99_ms=2.0,
        e2el_mean_ms=10.0,
        completed_requests=10,
        total_input_tokens=100,
        total_output_tokens=100,
        total_token_throughput=200.0,
        ttft_median_ms=1.0,
        tpot_median_ms=1.5,
        itl_median_ms=1.0,
        validity=validity,
    )


def test_rollup_validity_decodes_in_the_telemetry_view() -> None:
    bad = ValidityReason(code="client_saturated", detail="p99 event-loop lag 84 ms > 25 ms")
    rollup = Rollup(
        benchmark_type="sa-bench",
        timestamp="t",
        config=RollupConfig(model="m", isl=1, osl=1),
        runs=(
            _run(4, Validity(verdict="valid")),
            _run(16, Validity(verdict="invalid", reasons=(bad,))),
        ),
        validity=Validity(
            verdict="invalid",
            reasons=(ValidityReason(code=bad.code, detail=f"concurrency 16: {bad.detail}"),),
        ),
    )
    view = msgspec.json.decode(msgspec.json.encode(rollup), type=_Rollup)
    assert [r.validity.verdict for r in view.runs if r.validity] == ["valid", "invalid"]
    assert view.runs[1].validity is not None
    assert view.runs[1].validity.codes == "client_saturated"
    assert view.runs[1].tpot_median_ms == 1.5
    assert run_wide_reasons(view) == ()  # the file's reason is the window's, repeated
