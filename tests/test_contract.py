"""Contract: every config file the planner emits decodes in the package that consumes it.

The planner's golden plans (kept current by srt-planner's golden test) are the emitted configs:
each ``bench.json`` must decode and build in srt-bench, each ``tachometer_config.json`` in
srt-telemetry. A consumer that tightens its struct, or a planner that adds a field, fails here.

Also the files and bodies that cross packages at run time: ``benchmark-rollup.json`` (srt-bench
writes srt_schema.rollup's structs; status and the dashboard's subset decode them) and the status
API bodies (the runtime's JobCreate / JobUpdate, decoded by the collector as the same structs).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

import srt_bench
from srt_schema.bench_result import BenchResult
from srt_telemetry.config import ScrapeConfig, decode_config

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = sorted((ROOT / "packages" / "srt-planner" / "tests" / "golden").glob("*/job/plan.json"))


def _emitted(name: str) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for plan_path in GOLDEN:
        plan = json.loads(plan_path.read_text())
        for item in plan["files"]:
            if item["path"].rsplit("/", 1)[-1] == name:
                found.append((f"{plan_path.parent.parent.name}:{item['path']}", item))
    return found


BENCH = _emitted("bench.json")
SCRAPE = _emitted("tachometer_config.json")


def test_the_planner_emits_configs_to_check() -> None:
    assert len(GOLDEN) >= 30
    assert len(BENCH) >= 25
    assert len(SCRAPE) >= 25


@pytest.mark.parametrize(("source", "item"), BENCH, ids=[s for s, _ in BENCH])
def test_bench_config_decodes_and_plans(source: str, item: dict[str, Any]) -> None:
    config = srt_bench.decode_run_config(item["content"].encode(), source=source)
    srt_bench.build_plan(config, srt_bench.BuildContext(out_dir=Path("/logs")))


@pytest.mark.parametrize(("source", "item"), SCRAPE, ids=[s for s, _ in SCRAPE])
def test_tachometer_config_decodes(source: str, item: dict[str, Any]) -> None:
    config = decode_config(item["content"].encode(), ScrapeConfig, source=source)
    assert config.endpoints


def test_the_post_eval_lm_eval_config_decodes_and_plans() -> None:
    """The built-in post_eval runner's ``eval.json`` (planned only when RUN_EVAL / EVAL_ONLY is
    set, so it is in no golden plan)."""
    from srt_planner import plan_job
    from srt_planner.post_eval import EvalRequest
    from srt_schema import load_recipe_text
    from srt_schema.cluster import ClusterConfig

    text = (ROOT / "examples" / "quickstart.yaml").read_text()
    (job,) = load_recipe_text(text, file="quickstart.yaml", cluster=ClusterConfig())
    local = ClusterConfig(container_runtime="none", launcher="local")
    plan = plan_job(job.recipe, local, "localhost", "1", eval_request=EvalRequest(mode="run_eval"))
    (item,) = [f for f in plan.files if f.path == "eval.json"]
    config = srt_bench.decode_run_config(item.content.encode(), source="eval.json")
    built = srt_bench.build_plan(config, srt_bench.BuildContext(out_dir=Path("/logs")))
    assert built.benchmark_type == "lm-eval"


# --- benchmark-rollup.json: written by srt-bench, defined once in srt_schema.rollup -----------


def _sa_bench_result(c: int) -> dict[str, Any]:
    return {
        "model_id": "m",
        "max_concurrency": c,
        "output_throughput": 800.0 + c,
        "request_throughput": 0.5,
        "mean_ttft_ms": 400.0,
        "median_ttft_ms": 390.0,
        "p99_ttft_ms": 900.0,
        "mean_tpot_ms": 4.0,
        "median_tpot_ms": 3.9,
        "p99_tpot_ms": 5.0,
        "mean_itl_ms": 4.1,
        "median_itl_ms": 4.0,
        "p99_itl_ms": 9.0,
        "mean_e2el_ms": 4000.0 + c,
        "completed": 40,
        "total_input_tokens": 1000,
        "total_output_tokens": 500,
        "total_token_throughput": 7000.0,
    }


def _written_rollups(tmp_path: Path) -> dict[str, bytes]:
    from srt_bench.rollup import build_aiperf_runs, build_sa_bench_rollup, write_rollup
    from srt_schema.rollup import Rollup, RollupConfig

    sa = build_sa_bench_rollup(
        [msgspec.convert(_sa_bench_result(c), BenchResult) for c in (16, 4)],
        isl=128,
        osl=64,
        timestamp="t",
    )
    export = {
        "output_token_throughput": {"avg": 640.0},
        "request_throughput": {"avg": 10.0},
        "time_to_first_token": {"avg": 50.0, "p99": 90.0, "p50": 45.0},
        "inter_token_latency": {"avg": 5.0, "p99": 8.0, "p50": 4.5},
        "request_latency": {"avg": 400.0},
        "request_count": {"avg": 100},
    }
    aiperf = Rollup(
        benchmark_type="trace-replay",
        timestamp="t",
        config=RollupConfig(model="m", isl=None, osl=None),
        runs=build_aiperf_runs({8: export, 2: export}),
    )
    embed = Rollup(
        benchmark_type="mooncake-router",
        timestamp="t",
        config=RollupConfig(model="m", isl=None, osl=None, workload="conversation"),
        data={"anything": [1, 2]},
    )
    out = {}
    for name, rollup in (("sa-bench", sa), ("aiperf", aiperf), ("embed", embed)):
        folder = tmp_path / name
        folder.mkdir()
        out[name] = write_rollup(folder, rollup, None).read_bytes()
    return out


def test_written_rollups_decode_with_the_one_definition(tmp_path: Path) -> None:
    from srt_schema.rollup import decode_rollup

    written = _written_rollups(tmp_path)
    sa = decode_rollup(written["sa-bench"])
    assert [r.concurrency for r in sa.runs] == [4, 16]
    assert sa.runs[1].throughput_toks == 816.0
    assert json.loads(written["sa-bench"])["config"] == {"model": "m", "isl": 128, "osl": 64}
    embed = json.loads(written["embed"])
    assert "runs" not in embed and embed["data"] == {"anything": [1, 2]}
    assert decode_rollup(written["embed"]).config.workload == "conversation"
    assert [r.concurrency for r in decode_rollup(written["aiperf"]).sorted_runs()] == [2, 8]


def test_the_dashboard_decodes_every_field_it_shows_from_written_rollups(tmp_path: Path) -> None:
    import msgspec

    from srt_schema.rollup import RollupRun, decode_rollup
    from srt_telemetry.rollup_view import RollupRunView, decode_rollup_view

    view_fields = {f.name: f.type for f in msgspec.structs.fields(RollupRunView)}
    real_fields = {f.name: f.type for f in msgspec.structs.fields(RollupRun)}
    assert set(view_fields) <= set(real_fields)
    for name, kind in view_fields.items():
        assert kind == real_fields[name], name
    for source, data in _written_rollups(tmp_path).items():
        real = decode_rollup(data)
        view = decode_rollup_view(data, source=source)
        assert view.benchmark_type == real.benchmark_type
        assert len(view.runs) == len(real.runs)
        for got, want in zip(view.runs, real.sorted_runs(), strict=True):
            for name in view_fields:
                assert getattr(got, name) == getattr(want, name), (source, name)


def test_status_reads_the_rollup_with_the_structs_and_names_a_bad_file(tmp_path: Path) -> None:
    from srt_cli.errors import SlurmError
    from srt_cli.jobs import build_results, read_rollup

    folder = tmp_path / "sa-bench"
    written = _written_rollups(tmp_path)["sa-bench"]
    results = build_results(read_rollup(folder / "benchmark-rollup.json"))
    assert json.loads(written)["runs"][0]["concurrency"] == 4
    assert results[0] == {
        "concurrency": 4,
        "request_throughput": 0.5,
        "output_tok_s": 804.0,
        "ttft_p50_ms": 390.0,
        "itl_p50_ms": 4.0,
        "verdict": None,  # not judged: srt-bench validity did not run on this rollup
        "reasons": [],
    }
    assert read_rollup(tmp_path / "missing.json") is None
    bad = tmp_path / "bad.json"
    bad.write_text('{"benchmark_type": "x", "timestamp": "t", "config": {}, "runs": []}')
    with pytest.raises(SlurmError) as exc:
        read_rollup(bad)
    assert str(exc.value) == (
        f"{bad}: cannot be read: Object missing required field `model` - at `$.config`"
    )


# --- the status API: the runtime's bodies are the collector's, decoded with the same structs ----


def test_every_status_body_the_runtime_sends_decodes_in_the_collector() -> None:
    import msgspec

    from srt_cli.collector.protocol import parse_create, parse_update
    from srt_runtime.reporting.status import JobCreate, JobUpdate

    create = JobCreate(
        job_id="4242", job_name="n", submitted_at="2026-11-29T15:00:00Z", metadata={"a": 1}
    )
    assert msgspec.structs.asdict(parse_create(msgspec.json.encode(create))) == (
        msgspec.structs.asdict(create)
    )
    full = JobUpdate(
        status="completed",
        updated_at="2026-11-29T15:00:01Z",
        stage="cleanup",
        message="done",
        started_at="2026-11-29T15:00:00Z",
        completed_at="2026-11-29T15:00:01Z",
        exit_code=0,
        logs_url="s3://b/k",
        metadata={"cluster": "c"},
    )
    for update in (full, JobUpdate(status="starting", updated_at="2026-11-29T15:00:00Z")):
        got = msgspec.structs.asdict(parse_update(msgspec.json.encode(update)))
        assert got == {
            **msgspec.structs.asdict(update),
            "artifacts": None,
            "benchmark_results": None,
        }


# --- power -> rollup: srt-telemetry's power files, merged by `srt-bench energy` -----------------


def test_energy_json_and_manifest_json_that_srt_telemetry_writes_decode_in_srt_benchs_merge(
    tmp_path: Path,
) -> None:
    """srt-bench writes the rollup and the window, srt-telemetry's real finalization writes
    `manifest.json` + `energy.json` (and its real CSV writers the CPU rows), then srt-bench's
    energy merge reads them without importing srt-telemetry."""
    import csv

    from srt_bench.energy import apply_energy
    from srt_bench.rollup import build_sa_bench_rollup, write_rollup
    from srt_bench.windows import build_window, write_window
    from srt_schema.rollup import decode_rollup
    from srt_telemetry.atomic import write_json_atomic
    from srt_telemetry.config import (
        ExpectedDevice,
        ExpectedWindow,
        PowerConfig,
        PowerEndpoint,
        WorkerAssignment,
    )
    from srt_telemetry.cpu_collect import CPU_HEADER, build_rows
    from srt_telemetry.cpu_scrape import CPU_EXPORTER_HEADER
    from srt_telemetry.cpu_sources import ChannelReading
    from srt_telemetry.power_finalize import RuntimeFacts, finalize_power
    from srt_telemetry.power_manifest import CollectorState
    from srt_telemetry.power_samples import Sample, SamplesWriter

    log, start, end = tmp_path / "logs", 1000.5, 1010.5
    power = log / "power"
    (power / "windows").mkdir(parents=True)
    stem = "results_concurrency_4_gpus_2"
    result_path = f"sa-bench_isl_128_osl_64/{stem}.json"
    result = {
        **_sa_bench_result(4),
        "benchmark_start_time_unix": start,
        "benchmark_end_time_unix": end,
        "duration": end - start,
    }
    (log / result_path).parent.mkdir(parents=True)
    (log / result_path).write_text(json.dumps(result))
    typed = msgspec.convert(result, BenchResult)
    write_rollup(log, build_sa_bench_rollup([typed], isl=128, osl=64, timestamp="t"), None)
    write_window(
        power / "windows",
        stem,
        build_window(
            benchmark_type="sa-bench", result_path=result_path, concurrency=4, start_unix=start,
            end_unix=end, duration=end - start, status="completed", reason=None,
        ),
    )  # fmt: skip
    samples = SamplesWriter(power / "samples.csv")
    for seq in range(13):  # one sample a second, 999..1011 s; GPU 1 ramps up
        t = 999.0 + seq
        samples.write(
            Sample(timestamp_unix=t, scrape_seq=seq, hostname="n1", gpu_index=g,
                   gpu_uuid=f"GPU-{g}", power_w=100.0 + g * (50.0 + seq))
            for g in (0, 1)
        )  # fmt: skip
    samples.close()
    write_json_atomic(
        power / "collector.json",
        CollectorState(
            status="stopped", ready=True, started_at_unix=998.0, stopped_at_unix=1012.0,
            scrape_count=13, sample_row_count=26,
        ),
    )  # fmt: skip
    agg = WorkerAssignment(worker_role="agg", worker_index=0, worker_process=0)
    config = PowerConfig(
        power_dir=str(power),
        result_root=str(log),
        endpoints=(PowerEndpoint(hostname="n1", url="http://127.0.0.1:9/metrics"),),
        expected_devices=tuple(
            ExpectedDevice(hostname="n1", gpu_index=g, assignments=(agg,)) for g in (0, 1)
        ),
        expected_windows=(ExpectedWindow(benchmark_type="sa-bench", concurrency=4),),
        required=True,
    )  # fmt: skip
    final = finalize_power(config, RuntimeFacts())
    assert final.manifest.publication_valid, final.manifest.reason_codes
    (cpu_a := log / "cpu_power").mkdir()
    with (cpu_a / "samples.csv").open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(CPU_HEADER)
        for t, watts in ((1000.0, 300.0), (1011.0, 410.0)):  # two sockets of watts / 2
            readings = [
                ChannelReading(sensor=f"hwmon{s}/power1", kind="total", socket=str(s),
                               label=f"Grace Power Socket {s}", watts=watts / 2)
                for s in (0, 1)
            ]  # fmt: skip
            w.writerows(build_rows(readings, hostname="n1", source="acpi", ts=t))
    (power / "cpu").mkdir()
    with (power / "cpu" / "samples.csv").open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(CPU_EXPORTER_HEADER)
        w.writerows([[1, t, "n1", "acpi", "s0", 0, 999.0, 999.0] for t in (990.0, 1020.0)])

    outcome = apply_energy(log, power, cpu_a)
    assert outcome is not None and outcome.runs_with_energy == 1 and outcome.publication_valid
    rollup = decode_rollup((log / "benchmark-rollup.json").read_bytes())
    energy = rollup.runs[0].energy
    (window,) = json.loads((power / "energy.json").read_text())["windows"]
    assert energy is not None and window["energy_joules"] is not None
    assert energy.gpu_energy_joules == window["energy_joules"]
    assert energy.gpu_avg_power_w == window["avg_power_w"]
    # GPU 0: 100 W; GPU 1: 150 W at 999 s plus 1 W/s, so 151.5 W at the start, 161.5 W at the end
    expected = {"n1/0": 10 * 100.0, "n1/1": 10 * (151.5 + 161.5) / 2}
    assert energy.per_gpu_joules == window["per_device_joules"] == expected
    assert energy.per_node_joules == {"n1": 1000.0 + 1565.0}
    assert energy.joules_per_total_token == 2565.0 / (1000 + 500)
    assert energy.joules_per_output_token == 2565.0 / 500
    assert energy.joules_per_output_token == pytest.approx(window["joules_per_output_token"])
    # leg A (preferred to leg B): 300 W at 1000 s to 410 W at 1011 s, so 305 W and 405 W
    assert energy.per_node_cpu_joules == {"n1": 10 * (305.0 + 405.0) / 2}
    assert energy.cpu_energy_joules == 3550.0
    assert energy.power_coverage_valid and energy.reason_codes == ()
    assert rollup.power is not None and rollup.power.status == "complete"


def test_the_pages_read_the_capacity_targets_the_rollup_writes() -> None:
    """srt-telemetry's `TargetView` (installed alone) decodes srt_schema's `CapacityTarget`:
    the same field names (the view keeps `metric` a plain string), and a written rollup's
    targets decode equal."""
    import msgspec

    from srt_schema.rollup import Rollup, RollupConfig, encode_rollup
    from srt_schema.rollup_capacity import CapacityResult, CapacityTarget
    from srt_telemetry.rollup_view import decode_rollup_view
    from srt_telemetry.targets import TargetView

    view = {f.name: f.type for f in msgspec.structs.fields(TargetView)}
    real = {f.name: f.type for f in msgspec.structs.fields(CapacityTarget)}
    assert set(view) == set(real)
    assert all(view[n] == real[n] for n in view if n != "metric"), (view, real)
    targets = (
        CapacityTarget(name="tpot_p50_ms", metric="tpot", percentile=50.0, limit_ms=15.0),
        CapacityTarget(name="ttft_p99_ms", metric="ttft", percentile=99.0, limit_ms=200.0),
    )
    rollup = Rollup(
        benchmark_type="sa-bench",
        timestamp="t",
        config=RollupConfig(model=None, isl=None, osl=None),
        capacity=CapacityResult(
            status="below_min",
            capacity=None,
            next_up=None,
            targets=targets,
            points=(),
            stopped="x",
            confident=False,
            statement="x",
        ),
    )
    got = decode_rollup_view(encode_rollup(rollup), source="r").targets
    assert [msgspec.to_builtins(t) for t in got] == [msgspec.to_builtins(t) for t in targets]
