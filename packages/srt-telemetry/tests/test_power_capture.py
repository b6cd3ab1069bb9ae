"""The GPU power leg end to end: a replayed DCGM exporter per node, `power collect` as a real
process, `wait-ready`, measurement windows written like the benchmark client does, SIGTERM,
then `power finalize` and its exit code."""

from __future__ import annotations

import csv
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest
from telemetry_fakes.dcgm import dcgm_body
from telemetry_fakes.replay import replay_server
from telemetry_testkit import DATA

from srt_telemetry.config import (
    ExpectedDevice,
    ExpectedWindow,
    PowerConfig,
    PowerEndpoint,
    WorkerAssignment,
)

N2_BODY = dcgm_body([("0", "GPU-n2-0", "300.5"), ("1", "GPU-n2-1", "310.25")], host="n2")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "srt_telemetry", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _config(
    tmp_path: Path, url: object, *, required: bool, n2_gpus: int = 2, cpu: bool = False
) -> Path:
    devices = [
        ExpectedDevice(
            hostname="n1",
            gpu_index=g,
            assignments=(
                WorkerAssignment(worker_role="prefill", worker_index=0, worker_process=0),
            ),
        )
        for g in range(4)
    ] + [
        ExpectedDevice(
            hostname="n2",
            gpu_index=g,
            assignments=(WorkerAssignment(worker_role="decode", worker_index=0, worker_process=0),),
        )
        for g in range(n2_gpus)
    ]
    cfg = PowerConfig(
        power_dir=str(tmp_path / "logs" / "power"),
        result_root=str(tmp_path / "logs"),
        endpoints=(
            PowerEndpoint(hostname="n1", url=url("/n1")),  # type: ignore[operator]
            PowerEndpoint(hostname="n2", url=url("/n2")),  # type: ignore[operator]
        ),
        expected_devices=tuple(devices),
        expected_windows=(ExpectedWindow(benchmark_type="sa-bench", concurrency=4),),
        job_id="123",
        run_name="t",
        collect_interval_ms=100,
        request_timeout_seconds=1.0,
        startup_timeout_seconds=3.0,
        required=required,
        exporter_command="dcgm-exporter --collect-interval=100 --address :9401",
        cpu_exporter_endpoints=(
            (
                PowerEndpoint(hostname="n1", url=url("/cpu")),  # type: ignore[operator]
                PowerEndpoint(hostname="n2", url=url("/gone")),  # type: ignore[operator]
            )
            if cpu
            else ()
        ),
    )
    path = tmp_path / "power.json"
    path.write_bytes(msgspec.json.encode(cfg))
    return path


def _write_window(logs: Path, start: float, end: float, tokens: int = 1000) -> None:
    stem = "results_concurrency_4_gpus_6"
    rel = f"sa-bench_isl_8_osl_8/{stem}.json"
    (logs / "sa-bench_isl_8_osl_8").mkdir(parents=True, exist_ok=True)
    (logs / rel).write_text(
        json.dumps(
            {
                "benchmark_start_time_unix": start,
                "benchmark_end_time_unix": end,
                "duration": end - start,
                "total_output_tokens": tokens,
            }
        )
    )
    (logs / "power" / "windows" / f"{stem}.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "benchmark_type": "sa-bench",
                "result_path": rel,
                "concurrency": 4,
                "benchmark_start_time_unix": start,
                "benchmark_end_time_unix": end,
                "duration": end - start,
                "clock_source": "head_node_unix_clock",
                "status": "completed",
                "reason": None,
            }
        )
    )


def test_publishable_capture(tmp_path: Path, dcgm_text: str, spawn: Any) -> None:
    bodies = {
        "/n1": dcgm_text,
        "/n2": N2_BODY,
        "/cpu": (DATA / "cpu-power-exporter.txt").read_text(),
    }
    with replay_server(bodies) as srv:
        cfg = _config(tmp_path, srv.url, required=True, cpu=True)
        proc = spawn("power", "collect", "--config", str(cfg))
        ready = _cli("power", "wait-ready", "--config", str(cfg))
        assert ready.returncode == 0, ready.stderr
        manifest = json.loads((tmp_path / "logs" / "power" / "manifest.json").read_text())
        assert manifest["status"] == "running"
        start = time.time() + 0.05
        time.sleep(0.8)
        end = time.time() - 0.05
        _write_window(tmp_path / "logs", start, end)
        time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert proc.returncode == 0
    fin = _cli("power", "finalize", "--config", str(cfg))
    assert fin.returncode == 0, fin.stdout + fin.stderr
    m = json.loads((tmp_path / "logs" / "power" / "manifest.json").read_text())
    assert (m["status"], m["publication_valid"], m["reason_codes"]) == ("complete", True, [])
    assert m["scrape_count"] >= 8 and m["sample_row_count"] == 6 * m["scrape_count"]
    assert [(d["hostname"], d["gpu_index"]) for d in m["observed_devices"]] == [
        ("n1", 0),
        ("n1", 1),
        ("n1", 2),
        ("n1", 3),
        ("n2", 0),
        ("n2", 1),
    ]
    (v,) = m["window_validations"]
    assert (
        v["power_coverage_valid"]
        and v["window_file"] == "windows/results_concurrency_4_gpus_6.json"
    )
    assert set(v["per_device_max_sample_gap_seconds"]) == {
        "n1/GPU-c8edd83a-7dc2-4667-5639-a30a879048ae",
        "n1/GPU-d4396d51-7daf-eff7-3053-bc11d5ab951a",
        "n1/GPU-311fdf01-245a-0417-e44e-873da90a00f0",
        "n1/GPU-b9ce3e23-61ec-01a7-8631-6254f20f5dfd",
        "n2/GPU-n2-0",
        "n2/GPU-n2-1",
    }
    assert max(v["per_device_max_sample_gap_seconds"].values()) < 0.5
    energy = json.loads((tmp_path / "logs" / "power" / "energy.json").read_text())
    (w,) = energy["windows"]
    watts = 170.582 + 171.187 + 165.866 + 180.378 + 300.5 + 310.25  # constant replayed power
    assert w["avg_power_w"] == pytest.approx(watts, rel=1e-6)
    assert w["energy_joules"] == pytest.approx(watts * (end - start), rel=1e-6)
    assert w["joules_per_output_token"] == pytest.approx(w["energy_joules"] / 1000, rel=1e-6)
    header = (tmp_path / "logs" / "power" / "samples.csv").read_text().splitlines()[0]
    assert header == "schema_version,timestamp_unix,scrape_seq,hostname,gpu_index,gpu_uuid,power_w"
    # CPU exporter leg (best-effort): n1 answers, n2 does not
    cpu_manifest = json.loads(
        (tmp_path / "logs" / "power" / "cpu" / "cpu_manifest.json").read_text()
    )
    nodes = cpu_manifest["nodes"]
    assert cpu_manifest["producer"] == "srt-slurm.cpu-power"
    assert nodes["n1"]["resolved_mode"] == "acpi" and nodes["n1"]["error_count"] == 0
    assert nodes["n2"] == {
        "resolved_mode": None,
        "scrape_count": 0,
        "error_count": nodes["n2"]["error_count"],
    }
    assert nodes["n2"]["error_count"] >= 5
    with (tmp_path / "logs" / "power" / "cpu" / "samples.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == [
        "schema_version",
        "timestamp_unix",
        "hostname",
        "source",
        "sensor",
        "socket_id",
        "power_w",
        "total_power_w",
    ]
    assert len(rows) == 6 * nodes["n1"]["scrape_count"]
    assert {r["total_power_w"] for r in rows} == {"199.529"}
    # the offline re-check agrees, and notices a wrong role count and tampering
    logs = tmp_path / "logs"
    ok = _cli(
        "power",
        "validate",
        "--power-dir",
        str(logs / "power"),
        "--result-root",
        str(logs),
        "--expect-role",
        "prefill=4",
        "--expect-role",
        "decode=2",
    )
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, "publishable and consistent\n", "")
    bad = _cli(
        "power",
        "validate",
        "--power-dir",
        str(logs / "power"),
        "--result-root",
        str(logs),
        "--expect-role",
        "prefill=3",
    )
    assert bad.returncode == 1
    assert bad.stderr == "role prefill: expected 3 GPUs, the manifest lists 4\n"
    samples = logs / "power" / "samples.csv"
    lines = samples.read_text().splitlines(keepends=True)
    samples.write_text("".join(lines[:-1]) + lines[-1].replace(",1,", ",9,", 1))
    tampered = _cli(
        "power", "validate", "--power-dir", str(logs / "power"), "--result-root", str(logs)
    )
    assert tampered.returncode == 1 and "unexpected_device" in tampered.stderr


def test_required_but_a_gpu_never_reports(tmp_path: Path, dcgm_text: str, spawn: Any) -> None:
    """n2 is expected to have 3 GPUs but reports 2: never ready; required => exit 1."""
    with replay_server({"/n1": dcgm_text, "/n2": N2_BODY}) as srv:
        cfg = _config(tmp_path, srv.url, required=True, n2_gpus=3)
        proc = spawn("power", "collect", "--config", str(cfg), quiet=True)
        ready = _cli("power", "wait-ready", "--config", str(cfg))
        assert ready.returncode == 1
        assert "exporter_startup_timeout" in ready.stderr
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    fin = _cli("power", "finalize", "--config", str(cfg))
    assert fin.returncode == 1
    m = json.loads((tmp_path / "logs" / "power" / "manifest.json").read_text())
    assert m["status"] == "failed" and m["publication_valid"] is False
    assert m["reason_codes"] == ["exporter_startup_timeout", "expected_device_missing"]
    assert m["window_validations"][0]["reason_codes"] == ["measurement_window_missing"]
    # a manifest edited to claim publication is caught offline
    m["publication_valid"] = True
    (tmp_path / "logs" / "power" / "manifest.json").write_text(json.dumps(m))
    logs = tmp_path / "logs"
    res = _cli("power", "validate", "--power-dir", str(logs / "power"), "--result-root", str(logs))
    assert res.returncode == 1
    assert res.stderr.splitlines() == ["publication_valid: stored True, recomputed False"]


def test_best_effort_interrupted_exits_zero(tmp_path: Path, dcgm_text: str, spawn: Any) -> None:
    with replay_server({"/n1": dcgm_text, "/n2": N2_BODY}) as srv:
        cfg = _config(tmp_path, srv.url, required=False)
        proc = spawn("power", "collect", "--config", str(cfg), quiet=True)
        assert _cli("power", "wait-ready", "--config", str(cfg)).returncode == 0
        # a window the client started but never finished
        _write_window(tmp_path / "logs", time.time(), time.time() + 1)
        wpath = tmp_path / "logs" / "power" / "windows" / "results_concurrency_4_gpus_6.json"
        raw = json.loads(wpath.read_text())
        raw.update(status="running", benchmark_end_time_unix=None, duration=None)
        wpath.write_text(json.dumps(raw))
        (tmp_path / "logs" / raw["result_path"]).unlink()  # no result was saved
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    fin = _cli("power", "finalize", "--config", str(cfg), "--interrupted", "--exporter-exited")
    assert fin.returncode == 0, fin.stderr
    m = json.loads((tmp_path / "logs" / "power" / "manifest.json").read_text())
    assert m["status"] == "incomplete" and not m["publication_valid"]
    assert m["reason_codes"] == ["exporter_exited", "collector_interrupted"]
    assert m["window_validations"][0]["reason_codes"] == [
        "measurement_window_incomplete",
        "measurement_window_result_missing",
    ]
    # converted after the clean reap, never with an invented end
    raw = json.loads(wpath.read_text())
    assert raw["status"] == "interrupted" and raw["benchmark_end_time_unix"] is None
    assert raw["reason"] == "benchmark did not reach a formal end boundary"


def test_collector_never_stopped_is_operational_failure(tmp_path: Path) -> None:
    cfg_path = _config(tmp_path, lambda p: "http://127.0.0.1:9/x", required=False)
    cfg = msgspec.json.decode(cfg_path.read_bytes(), type=PowerConfig)
    cfg = msgspec.structs.replace(cfg, collector_join_timeout_seconds=0.2)
    cfg_path.write_bytes(msgspec.json.encode(cfg))
    fin = _cli("power", "finalize", "--config", str(cfg_path), "--benchmark-reap", "timeout")
    assert fin.returncode == 1
    m = json.loads((tmp_path / "logs" / "power" / "manifest.json").read_text())
    assert m["status"] == "incomplete" and m["publication_valid"] is False
    assert m["reason_codes"] == ["benchmark_child_reap_timeout", "collector_join_timeout"]


def test_runtime_startup_failure_makes_required_capture_failed(tmp_path: Path) -> None:
    """The runtime could not resolve a node: the collector ran (and stopped) without samples."""
    from srt_telemetry.atomic import write_json_atomic
    from srt_telemetry.power_manifest import CollectorState
    from srt_telemetry.power_samples import SamplesWriter

    cfg = _config(tmp_path, lambda p: "http://127.0.0.1:9" + p, required=True)
    power = tmp_path / "logs" / "power"
    (power / "windows").mkdir(parents=True)
    SamplesWriter(power / "samples.csv").close()
    write_json_atomic(
        power / "collector.json",
        CollectorState(status="stopped", started_at_unix=1.0, stopped_at_unix=2.0, scrape_count=0),
    )
    fin = _cli(
        "power", "finalize", "--config", str(cfg), "--startup-failure", "endpoint_resolution_failed"
    )
    assert fin.returncode == 1
    m = json.loads((power / "manifest.json").read_text())
    assert (m["status"], m["publication_valid"]) == ("failed", False)
    assert m["reason_codes"] == ["endpoint_resolution_failed", "expected_device_missing"]
