"""`srt-bench validity`: one test per reason code over small inputs (pure functions), the run's
verdict, the rewrite of the rollup, and the one table the docs render."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from srt_bench.__main__ import main
from srt_bench.client_load import LoopMonitor, build_client_load
from srt_bench.results import MAX_FAILURE_RATE as GATE
from srt_bench.validity import (
    apply_validity,
    build_run_validity,
    build_window_validity,
    merge_validity,
)
from srt_bench.validity_inputs import (
    ClockFailureView,
    ClockView,
    Downtime,
    ProcessEventView,
    RestartEventView,
    RestartsView,
    ValidityInputs,
    build_downtimes,
    build_restart_times,
)
from srt_schema.bench_result import BenchResult
from srt_schema.rollup import (
    ClientLoad,
    PowerSummary,
    Rollup,
    RollupConfig,
    RollupRun,
    RunEnergy,
    decode_rollup,
    encode_rollup,
)
from srt_schema.validity import (
    MAX_FAILURE_RATE,
    VALIDITY_REASONS,
    HealthGateRecord,
    render_validity_table,
)

DOCS = Path(__file__).resolve().parents[3] / "docs" / "telemetry-and-bench.md"
T0 = 1_700_000_000.0


def _run(c: int = 4, **changes: Any) -> RollupRun:
    fields: dict[str, Any] = dict.fromkeys(RollupRun.__struct_fields__)
    fields.update(concurrency=c, total_output_tokens=640, completed_requests=40)
    fields.update(changes)
    return RollupRun(**fields)


def _result(c: int = 4, **changes: Any) -> BenchResult:
    doc: dict[str, Any] = {
        "max_concurrency": c,
        "num_prompts": 40,
        "requested_num_prompts": 40,
        "completed": 40,
        "failed": 0,
        "duration": 10.0,
        "benchmark_start_time_unix": T0,
        "benchmark_end_time_unix": T0 + 10.0,
        "median_e2el_ms": 500.0,
        "client_load": msgspec.to_builtins(
            build_client_load([0.001] * 100, cpu_seconds=2.0, wall_seconds=10.0)
        ),
    }
    doc.update(changes)
    return msgspec.convert(doc, BenchResult)


def _gate(**changes: Any) -> HealthGateRecord:
    fields: dict[str, Any] = {
        "family": "dynamo",
        "url": "http://node-01:8000/health",
        "expected_prefill": 0,
        "expected_decode": 2,
        "seen_prefill": 0,
        "seen_decode": 2,
        "passed_unix": T0 - 30.0,
        "seconds": 3.0,
    }
    fields.update(changes)
    return HealthGateRecord(**fields)


def _inputs(**changes: Any) -> ValidityInputs:
    base = ValidityInputs(
        results={4: _result()},
        gate=_gate(),
        downtimes=(),
        restarts={},
        clock=None,
        power_asked=False,
        single_host=True,
        expected=(4,),
    )
    return dataclasses.replace(base, **changes)


def _codes(run: RollupRun, result: dict[str, Any] | None, inputs: ValidityInputs) -> list[str]:
    return [r.code for r in build_window_validity(run, result, inputs).reasons]


def test_a_healthy_window_is_valid_with_nothing_unchecked() -> None:
    verdict = build_window_validity(_run(), _result(), _inputs())
    assert (verdict.verdict, verdict.reasons, verdict.not_checked) == ("valid", (), ())


def test_no_output_tokens() -> None:
    verdict = build_window_validity(_run(total_output_tokens=0), _result(), _inputs())
    assert verdict.verdict == "invalid"
    assert [(r.code, r.detail) for r in verdict.reasons] == [
        ("no_output_tokens", "0 output tokens from 40 completed request(s)")
    ]


def test_request_failure_rate_over_the_gate_and_not_at_it() -> None:
    assert GATE == MAX_FAILURE_RATE  # the table's bound is sa-bench's gate
    at_gate = _result(failed=2)  # 5.0%: not over
    assert _codes(_run(), at_gate, _inputs()) == []
    over = build_window_validity(_run(), _result(failed=3), _inputs())
    assert [(r.code, r.detail) for r in over.reasons] == [
        ("request_failure_rate", "3/40 requests failed (7.5%) > 5%")
    ]


def test_client_saturated_by_event_loop_lag_or_cpu_share() -> None:
    lagging = build_client_load([0.001] * 90 + [0.08] * 10, cpu_seconds=1.0, wall_seconds=10.0)
    verdict = build_window_validity(
        _run(), _result(client_load=msgspec.to_builtins(lagging)), _inputs()
    )
    assert [(r.code, r.detail) for r in verdict.reasons] == [
        ("client_saturated", "p99 event-loop lag 80.0 ms > 50 ms")
    ]
    busy = build_client_load([0.001] * 100, cpu_seconds=9.5, wall_seconds=10.0)
    verdict = build_window_validity(
        _run(), _result(client_load=msgspec.to_builtins(busy)), _inputs()
    )
    assert [r.detail for r in verdict.reasons] == ["client CPU share 95% of a core > 90%"]


def test_window_too_short_relative_to_the_latency() -> None:
    few = build_window_validity(_run(), _result(duration=2.0, median_e2el_ms=900.0), _inputs())
    assert [r.detail for r in few.reasons] == [
        "window 2.00 s < 3 x the median E2E latency (900 ms)"
    ]
    # a fast healthy window: 0.2 s of 50 ms requests is 4 latencies, not too short
    assert _codes(_run(), _result(duration=0.2, median_e2el_ms=50.0), _inputs()) == []


def test_workers_not_ready_at_the_gate_or_lost_before_or_in_the_window() -> None:
    gate = _inputs(gate=_gate(seen_decode=1))
    assert [r.detail for r in build_window_validity(_run(), _result(), gate).reasons] == [
        "the health gate saw 1 of 2 decode/agg workers"
    ]
    lost = Downtime(worker="agg_1_node-01", down_unix=T0 + 4.0, up_unix=None, restarted=False)
    verdict = build_window_validity(_run(), _result(), _inputs(downtimes=(lost,)))
    assert [(r.code, r.detail) for r in verdict.reasons] == [
        (
            "workers_not_ready",
            "agg_1_node-01 exited +4.0 s from the window start and never came back",
        )
    ]
    before = Downtime(worker="agg_0", down_unix=T0 - 5.0, up_unix=T0 + 1.0, restarted=False)
    assert _codes(_run(), _result(), _inputs(downtimes=(before,))) == ["workers_not_ready"]
    # down and back before the window, or down after it: this window is not affected
    earlier = Downtime(worker="agg_0", down_unix=T0 - 5.0, up_unix=T0 - 1.0, restarted=False)
    later = Downtime(worker="agg_0", down_unix=T0 + 11.0, up_unix=None, restarted=False)
    assert _codes(_run(), _result(), _inputs(downtimes=(earlier, later))) == []


def test_worker_restarted_from_the_events_or_the_restart_record() -> None:
    crash = Downtime(worker="agg_1", down_unix=T0 + 2.0, up_unix=T0 + 5.0, restarted=True)
    verdict = build_window_validity(_run(), _result(), _inputs(downtimes=(crash,)))
    [(code, detail)] = [(r.code, r.detail) for r in verdict.reasons]
    assert code == "worker_restarted"
    assert detail == (
        "agg_1 exited +2.0 s from the window start and was back +5.0 s from the window start"
    )
    record = _inputs(downtimes=None, restarts={"agg_1_node-01": (T0 + 2.0, T0 + 3.0)})
    verdict = build_window_validity(_run(), _result(), record)
    assert [r.code for r in verdict.reasons] == ["worker_restarted"]
    assert [r.code for r in verdict.not_checked] == ["workers_not_ready"]


def test_power_invalid_only_when_power_was_asked_for() -> None:
    energy = RunEnergy(
        gpu_energy_joules=None,
        gpu_avg_power_w=None,
        joules_per_output_token=None,
        joules_per_total_token=None,
        per_gpu_joules={},
        per_node_joules={},
        cpu_energy_joules=None,
        per_node_cpu_joules=None,
        power_coverage_valid=False,
        reason_codes=("sample_gap_exceeded",),
    )
    run = _run(energy=energy)
    assert _codes(run, _result(), _inputs()) == []
    asked = _inputs(power_asked=True, clock=ClockView(clock_checks={"node-01": "ok"}))
    verdict = build_window_validity(run, _result(), asked)
    assert [(r.code, r.detail) for r in verdict.reasons] == [
        ("power_invalid", "power coverage not valid: sample_gap_exceeded")
    ]
    assert _codes(_run(), _result(), asked) == ["power_invalid"]  # no energy at all
    rollup = Rollup(
        benchmark_type="sa-bench",
        timestamp="t",
        config=RollupConfig(model=None, isl=None, osl=None),
        runs=(_run(),),
    )
    power = PowerSummary(
        publication_valid=False,
        status="incomplete",
        required=False,
        reason_codes=("exporter_exited",),
        missing=None,
    )
    whole = build_run_validity(rollup, {}, asked, power)
    assert [(r.code, r.detail) for r in whole.reasons] == [
        ("power_invalid", "power.publication_valid is false: exporter_exited")
    ]


def test_clock_skew_from_the_power_clock_check_and_what_is_unchecked_without_it() -> None:
    clock = ClockView(
        clock_checks={"node-01": "ok", "node-02": "failed"},
        clock_tolerance_seconds=0.5,
        clock_sync_failures=(ClockFailureView(hostname="node-02", offset_seconds=7.012),),
    )
    verdict = build_window_validity(_run(), _result(), _inputs(clock=clock, single_host=False))
    assert [(r.code, r.detail) for r in verdict.reasons] == [
        ("clock_skew", "node-02 is +7.01 s off the head node's clock > 0.5 s")
    ]
    blind = build_window_validity(_run(), _result(), _inputs(single_host=False))
    assert [(r.code, r.detail) for r in blind.not_checked] == [
        ("clock_skew", "no power telemetry: nothing compared the nodes' clocks")
    ]
    stamps = ClockView(clock_checks={"node-01": "not_checkable"})
    dcgm = build_window_validity(_run(), _result(), _inputs(clock=stamps, single_host=False))
    assert [r.detail for r in dcgm.not_checked] == [
        "no power exporter stamps its samples (dcgm-exporter does not)"
    ]


def test_window_missing_and_the_run_collects_every_window_reason() -> None:
    rollup = Rollup(
        benchmark_type="sa-bench",
        timestamp="t",
        config=RollupConfig(model=None, isl=None, osl=None),
        runs=(_run(4, total_output_tokens=0),),
    )
    inputs = _inputs(expected=(4, 16))
    window = build_window_validity(rollup.runs[0], _result(), inputs)
    whole = build_run_validity(rollup, {4: window}, inputs, None)
    assert whole.verdict == "invalid"
    assert [(r.code, r.detail) for r in whole.reasons] == [
        ("window_missing", "concurrency 16 was planned and has no result"),
        ("no_output_tokens", "c=4: 0 output tokens from 40 completed request(s)"),
    ]


def test_checks_without_evidence_are_listed_not_passed() -> None:
    verdict = build_window_validity(
        _run(total_output_tokens=None), None, _inputs(gate=None, downtimes=None)
    )
    assert verdict.verdict == "valid"
    assert [r.code for r in verdict.not_checked] == [
        "no_output_tokens",
        "request_failure_rate",
        "client_saturated",
        "window_too_short",
        "workers_not_ready",
        "worker_restarted",
    ]


def test_downtimes_from_status_events() -> None:
    def ev(what: str, name: str, at: float, kind: str = "worker") -> ProcessEventView:
        stamp = msgspec.json.decode(json.dumps(at).encode())
        iso = __import__("datetime").datetime.fromtimestamp(stamp, __import__("datetime").UTC)
        return ProcessEventView(
            event="process",
            what=what,
            name=name,
            process=name.split("_r", maxsplit=1)[0],
            kind=kind,
            at=iso.isoformat(timespec="milliseconds"),
        )

    events = [
        ev("started", "agg_0_node-01", T0),
        ev("started", "agg_1_node-01", T0),
        ev("exited", "frontend_0", T0 + 1, kind="frontend"),
        ev("exited", "agg_1_node-01", T0 + 2),
        ev("restarted", "agg_1_node-01_r1", T0 + 3),
        ev("started", "agg_1_node-01_r1", T0 + 3),
        ev("ready", "agg_1_node-01_r1", T0 + 6),
        ev("exited", "agg_0_node-01", T0 + 8),
    ]
    assert build_downtimes(events) == (
        Downtime(worker="agg_1_node-01", down_unix=T0 + 2, up_unix=T0 + 6, restarted=True),
        Downtime(worker="agg_0_node-01", down_unix=T0 + 8, up_unix=None, restarted=False),
    )
    record = RestartsView(
        events=(
            RestartEventView(
                worker="agg_1_node-01",
                exited_at="2023-11-14T22:13:22.000+00:00",
                relaunched_at="2023-11-14T22:13:23.500+00:00",
                ready_at=None,
            ),
        )
    )
    assert build_restart_times(record) == {"agg_1_node-01": (T0 + 2.0, T0 + 3.5)}


def _monitored(lateness: list[float], cpu_per_late_second: float) -> ClientLoad:
    """Run `LoopMonitor` (probe interval 0.25 s) on a fake clock: probe k wakes `lateness[k]`
    seconds after it asked to, and the process burns `cpu_per_late_second` CPU seconds per
    second of that lateness (1.0: the loop was late because it computed; 0.0: it was blocked)."""
    import asyncio

    wall, cpu = [100.0], [5.0]
    wakes = list(lateness)

    async def run() -> ClientLoad:
        done = asyncio.Event()

        async def sleep(seconds: float) -> None:
            if not wakes:
                await asyncio.Event().wait()  # no wake-up left: sleep until cancelled
            late = wakes.pop(0)
            await asyncio.sleep(0)
            wall[0] += seconds + late
            cpu[0] += late * cpu_per_late_second
            if not wakes:
                done.set()

        monitor = LoopMonitor(0.25, clock=lambda: wall[0], cpu_clock=lambda: cpu[0], sleep=sleep)
        async with monitor:
            await done.wait()
        assert monitor.load is not None
        return monitor.load

    return asyncio.run(run())


def test_the_client_measures_its_own_lag_and_cpu() -> None:
    """Each probe's lag is how much later than asked it woke; the CPU share is the process's CPU
    seconds over the window's wall seconds (a blocked loop is late without CPU, a computing one
    is late with it). How well this detects a real busy loop: benchmarks/loop_monitor.py."""
    lateness = [0.0, 0.0625, 0.125, 0.0]  # the loop was held before probes 2 and 3
    blocked = _monitored(lateness, cpu_per_late_second=0.0)
    assert blocked == ClientLoad(
        loop_lag_p50_ms=0.0,
        loop_lag_p99_ms=125.0,
        loop_lag_max_ms=125.0,
        lag_samples=4,
        cpu_seconds=0.0,
        wall_seconds=1.1875,  # 4 probes x 0.25 s + 0.1875 s late
        cpu_share=0.0,
    )
    spinning = _monitored(lateness, cpu_per_late_second=1.0)
    assert (spinning.loop_lag_p99_ms, spinning.lag_samples) == (125.0, 4)
    assert (spinning.cpu_seconds, spinning.cpu_share) == (0.1875, round(0.1875 / 1.1875, 4))
    assert build_client_load([], cpu_seconds=0.0, wall_seconds=0.0).cpu_share is None


def _write(log_dir: Path, rollup: Rollup, extra: dict[str, Any]) -> None:
    doc = msgspec.to_builtins(rollup)
    doc.update(extra)
    (log_dir / "benchmark-rollup.json").write_bytes(encode_rollup(doc))


def test_apply_rewrites_the_rollup_keeping_unknown_fields_and_is_idempotent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rollup = Rollup(
        benchmark_type="sa-bench",
        timestamp="t",
        config=RollupConfig(model="m", isl=8, osl=8),
        runs=(_run(4), _run(16, total_output_tokens=0)),
    )
    _write(tmp_path, rollup, {"from_a_newer_writer": {"kept": True}})
    results = tmp_path / "sa-bench_isl_8_osl_8"
    results.mkdir()
    for c in (4, 16):
        path = results / f"results_concurrency_{c}_gpus_2.json"
        path.write_bytes(msgspec.json.encode(_result(c)))
    gate = msgspec.json.encode(_gate())
    (tmp_path / "health_gate.json").write_bytes(gate)
    (tmp_path.parent / "status_events.jsonl").write_text("")
    with pytest.raises(SystemExit) as done:
        main([
            "validity", "--log-dir", str(tmp_path), "--expect-concurrency", "4",
            "--expect-concurrency", "16", "--single-host",
        ])  # fmt: skip
    assert done.value.code == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary == {
        "verdict": "invalid",
        "reasons": ["no_output_tokens"],
        "windows": {"4": "valid", "16": "invalid"},
    }
    written = (tmp_path / "benchmark-rollup.json").read_bytes()
    doc = json.loads(written)
    assert doc["from_a_newer_writer"] == {"kept": True}
    decoded = decode_rollup(written)
    assert decoded.validity is not None and decoded.validity.verdict == "invalid"
    assert [r.validity.verdict for r in decoded.runs if r.validity] == ["valid", "invalid"]
    assert decoded.runs[0].client_load is not None
    assert decoded.runs[0].client_load.cpu_share == 0.2
    again = apply_validity(tmp_path, expected=(4, 16), single_host=True)
    assert again is not None and not again.changed


def test_an_embedded_aiperf_export_is_not_judged_as_missing_windows() -> None:
    rollup = Rollup(
        benchmark_type="agentperf",
        timestamp="t",
        config=RollupConfig(model=None, isl=None, osl=None),
        data={"records": []},
    )
    doc, whole, windows = merge_validity(msgspec.to_builtins(rollup), rollup, _inputs(expected=()))
    assert (whole.verdict, windows) == ("valid", {})
    assert [r.code for r in whole.not_checked] == ["window_missing"]
    assert doc["validity"]["verdict"] == "valid"


def test_the_docs_table_is_the_rendering_of_the_one_vocabulary() -> None:
    text = DOCS.read_text()
    table = render_validity_table()
    assert table in text, "docs/telemetry-and-bench.md#validity: paste render_validity_table()"
    codes = re.findall(r"^\| `([a-z_]+)` \|", table, flags=re.M)
    assert codes == list(VALIDITY_REASONS)
