"""The files ``srt-bench validity`` reads from other packages decode with its own views, and what it
writes decodes in every reader: the runtime's ``worker_restarts.json``, ``status_events.jsonl`` and
``health_gate.json``, srt-telemetry's power manifest (clock check); the rollup's ``validity`` and
``client_load`` in ``srt_schema.rollup``, the dashboard's view and ``srtctl status``."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec

from srt_bench.client_load import build_client_load
from srt_bench.validity_inputs import (
    ClockView,
    ProcessEventView,
    RestartsView,
    build_downtimes,
    build_restart_times,
    parse_time,
)
from srt_planner.plan import RestartSpec
from srt_runtime.restart import RestartBook, RestartEvent
from srt_runtime.status import EventLog, decode_event_lines
from srt_schema.rollup import (
    Rollup,
    RollupConfig,
    RollupRun,
    Validity,
    ValidityReason,
    decode_rollup,
    encode_rollup,
)
from srt_schema.timestamps import iso_millis_offset
from srt_telemetry.power_manifest import ClockSyncFailure, Manifest
from srt_telemetry.rollup_view import decode_rollup_view


class _Clock:
    def __init__(self) -> None:
        self.t = 1_700_000_000.0

    def wall(self) -> float:
        return self.t

    def monotonic(self) -> float:
        return self.t


def test_the_runtime_records_decode_with_the_validity_views(tmp_path: Path) -> None:
    book = RestartBook(tmp_path / "worker_restarts.json")
    book.track("agg_1", RestartSpec(policy="on-failure"))
    event = book.add(
        RestartEvent(
            worker="agg_1_node-01",
            mode="agg",
            index=1,
            node="node-01",
            attempt=1,
            exit_code=137,
            exited_at=iso_millis_offset(1_700_000_002.0),
            outcome="scheduled",
        )
    )
    book.relaunched(event, iso_millis_offset(1_700_000_003.5))
    view = msgspec.json.decode(book.path.read_bytes(), type=RestartsView)
    assert build_restart_times(view) == {"agg_1_node-01": (1_700_000_002.0, 1_700_000_003.5)}

    clock = _Clock()
    log = EventLog(tmp_path, "77", clock)  # type: ignore[arg-type]
    log.process("exited", name="agg_1_node-01", process="agg_1_node-01", kind="worker", node="n")
    clock.t += 3
    log.process("restarted", name="agg_1_node-01_r1", process="agg_1_node-01", kind="worker",
                node="n")  # fmt: skip
    log.process("started", name="agg_1_node-01_r1", process="agg_1_node-01", kind="worker",
                node="n")  # fmt: skip
    log.health("http://x/health", 1.0)
    data = (tmp_path / "status_events.jsonl").read_bytes()
    assert len(decode_event_lines(data)) == 4
    decoder = msgspec.json.Decoder(ProcessEventView)
    events = [decoder.decode(line) for line in data.splitlines()]
    [down] = build_downtimes(events)
    assert (down.worker, down.down_unix, down.up_unix, down.restarted) == (
        "agg_1_node-01",
        1_700_000_000.0,
        1_700_000_003.0,
        True,
    )
    assert parse_time(iso_millis_offset(1_700_000_000.25)) == 1_700_000_000.25


def test_the_power_manifest_clock_check_decodes_with_the_view() -> None:
    manifest = Manifest(
        clock_checks={"node-01": "ok", "node-02": "failed"},
        clock_tolerance_seconds=0.5,
        clock_sync_failures=[ClockSyncFailure(hostname="node-02", offset_seconds=7.0)],
    )
    view = msgspec.json.decode(msgspec.json.encode(manifest), type=ClockView)
    assert view.clock_checks == {"node-01": "ok", "node-02": "failed"}
    assert [(f.hostname, f.offset_seconds) for f in view.clock_sync_failures] == [("node-02", 7.0)]


def test_the_verdict_decodes_in_the_dashboard_and_in_status(tmp_path: Path) -> None:
    from srt_cli.jobs import build_results, build_validity, read_rollup

    fields = dict.fromkeys(RollupRun.__struct_fields__)
    bad = Validity(
        verdict="invalid",
        reasons=(ValidityReason(code="no_output_tokens", detail="0 output tokens"),),
    )
    load = build_client_load([0.001, 0.002], cpu_seconds=1.0, wall_seconds=4.0)
    run = RollupRun(**{**fields, "concurrency": 4, "validity": bad, "client_load": load})
    rollup = Rollup(
        benchmark_type="sa-bench",
        timestamp="t",
        config=RollupConfig(model=None, isl=None, osl=None),
        runs=(run,),
        validity=bad,
    )
    data = encode_rollup(rollup)
    assert decode_rollup(data) == rollup
    view = decode_rollup_view(data, source="x")
    assert view.validity is not None and view.validity.verdict == "invalid"
    assert [r.code for r in view.window_validity[4].reasons] == ["no_output_tokens"]
    assert view.client_load[4].cpu_share == 0.25
    path = tmp_path / "benchmark-rollup.json"
    path.write_bytes(data)
    read = read_rollup(path)
    assert [(r["verdict"], r["reasons"]) for r in build_results(read)] == [
        ("invalid", ["no_output_tokens"])
    ]
    assert build_validity(read) == {
        "verdict": "invalid",
        "reasons": [{"code": "no_output_tokens", "detail": "0 output tokens"}],
        "not_checked": [],
    }
    # A rollup from before validity still decodes everywhere, with no verdict.
    old = json.loads(data)
    del old["validity"], old["runs"][0]["validity"], old["runs"][0]["client_load"]
    plain = json.dumps(old).encode()
    assert decode_rollup(plain).validity is None
    assert decode_rollup_view(plain, source="x").window_validity == {}
