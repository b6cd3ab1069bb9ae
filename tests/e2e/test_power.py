"""Power telemetry in a real two-node job (issue 17): the planner's power legs run under real
sbatch/srun on the slurm-lab cluster.

No GPU here, so each node's DCGM exporter is srt-telemetry's replaying exporter (a real GB200
``dcgm-exporter`` capture with every GPU's power on a known linear curve, started at one shared
``--start-unix``), and CPU power comes from a fake ACPI hwmon tree (``$SRT_HWMON_ROOT``). The
expected energy of each measurement window is the curve's integral over the window's own
bounds; the job's J/token must be within 1% of it. The failure cases: an exporter that dies in
the middle of the benchmark (with and without ``required``) and a node whose clock is off.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_jobs import REPO, SrtOnSlurm, Submission

from srt_telemetry.testing import curve_energy_joules, parse_curve
from srt_telemetry.testing.hwmon import write_fake_hwmon

CAPTURE = REPO / "packages" / "srt-telemetry" / "tests" / "data" / "replay" / "dcgm-gb200-4gpu.txt"
CURVE = "linear:180:0.75"
GPU_OFFSET_W = 12.5
CONCURRENCIES = [2, 4]
#: Non-default folders and budgets: the job must use what the recipe says.
POWER_DIR = "watts"
CPU_DIR = "cpu_watts"


def _recipe(
    tmp_path: Path,
    *,
    start: float,
    required: bool,
    replay_flags: str = "",
    name: str = "e2e-power",
) -> Path:
    command = (
        f"python3 -m srt_telemetry.testing replay-dcgm --capture {CAPTURE} --curve {CURVE} "
        f"--gpus 4 --gpu-offset-w {GPU_OFFSET_W} --start-unix {start:.3f} --host 0.0.0.0 "
        f"--port {{port}} {replay_flags}"
    ).strip()
    doc: dict[str, Any] = {
        "schema": 2,
        "name": name,
        "model": {"path": "tiny-word", "container": "none", "precision": "bf16"},
        "resources": {"gpus_per_node": 4},
        "engine": {"type": "mocker", "speedup_ratio": 100},
        "roles": {"prefill": {"nodes": 1, "workers": 1}, "decode": {"nodes": 1, "workers": 1}},
        "frontend": {"type": "dynamo", "enable_multiple_frontends": False},
        # Paced arrivals: each window lasts ~5 s, several samples at the 0.5 s cadence.
        "benchmark": {
            "type": "sa-bench",
            "isl": 32,
            "osl": 16,
            "concurrencies": CONCURRENCIES,
            "req_rate": 4,
            "num_prompts_mult": 10,
        },
        "health_check": {"max_attempts": 60, "interval_seconds": 1},
        "telemetry": {
            "enabled": True,
            "required": required,
            "collect_interval_ms": 500,
            "startup_timeout_seconds": 20,
            "request_timeout_seconds": 1.5,
            "collector_join_timeout_seconds": 20,
            "storage_subdir": POWER_DIR,
            "dcgm_exporter": {
                "container_image": "",
                "binary": "python3",
                "port": 9401,
                "command": command,
            },
            "cpu_power_exporter": {"port": 9405, "source": "acpi"},
            "cpu_power": {
                "enabled": True,
                "required": True,
                "source": "acpi",
                "sample_interval_seconds": 0.2,
                "startup_timeout_seconds": 20,
                "storage_subdir": CPU_DIR,
            },
        },
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _hwmon(tmp_path: Path) -> dict[str, str]:
    root = tmp_path / "hwmon"
    write_fake_hwmon(root, sockets=2, watts=100.0)
    return {"SRT_HWMON_ROOT": str(root)}


def _read(job: Submission, *parts: str) -> Any:
    return json.loads(job.job_dir.joinpath("logs", *parts).read_text())


def _run(srt: SrtOnSlurm, tmp_path: Path, **kwargs: Any) -> tuple[Submission, dict[str, Any]]:
    recipe = _recipe(tmp_path, **kwargs)
    job = srt.apply_one(recipe, env=_hwmon(tmp_path))
    return job, srt.wait(job, timeout=180.0)


def test_a_two_node_job_measures_energy_within_one_percent_of_the_curve(
    srt: SrtOnSlurm, tmp_path: Path
) -> None:
    start = time.time()
    job, status = _run(srt, tmp_path, start=start, required=True)
    assert (status["status"], status["exit_code"]) == ("completed", 0)

    manifest = _read(job, POWER_DIR, "manifest.json")
    assert (manifest["status"], manifest["publication_valid"]) == ("complete", True)
    assert manifest["reason_codes"] == []
    assert {d["hostname"] for d in manifest["observed_devices"]} == {"node1", "node2"}
    assert len(manifest["expected_devices"]) == 8
    assert manifest["request_timeout_seconds"] == 1.5
    plan = json.loads((job.job_dir / "plan.json").read_text())
    steps = {step["name"]: step for step in plan["finalize"]}
    assert steps["power-finalize"]["timeout_seconds"] == 20 + 60  # the join budget + 60 s
    gates = {p["name"]: p for p in plan["processes"] if p["name"].endswith("-ready")}
    assert gates["cpu-power-ready"]["timeout_seconds"] == 20 + 15  # its startup deadline + 15 s
    assert gates["cpu-power-ready"]["critical"] is True  # cpu_power.required

    rollup = _read(job, "benchmark-rollup.json")
    assert rollup["power"]["publication_valid"] is True
    runs = {r["concurrency"]: r for r in rollup["runs"]}
    assert sorted(runs) == CONCURRENCIES
    curve = parse_curve(CURVE)
    for concurrency in CONCURRENCIES:
        (window_file,) = job.job_dir.glob(
            f"logs/{POWER_DIR}/windows/results_concurrency_{concurrency}_*.json"
        )
        window = json.loads(window_file.read_text())
        assert window["status"] == "completed"
        t0, t1 = window["benchmark_start_time_unix"], window["benchmark_end_time_unix"]
        # Every node serves GPUs 0-3 on the same curve: twice one node's energy.
        expected_j = 2 * curve_energy_joules(
            curve,
            gpu_indices=range(4),
            gpu_offset_w=GPU_OFFSET_W,
            start_unix=start,
            t0_unix=t0,
            t1_unix=t1,
        )
        run = runs[concurrency]
        energy = run["energy"]
        tokens = run["total_output_tokens"]
        expected_per_token = expected_j / tokens
        measured_j, per_token = energy["gpu_energy_joules"], energy["joules_per_output_token"]
        print(
            f"\nconcurrency {concurrency}: window {t1 - t0:.3f} s, energy {measured_j:.3f} J"
            f" (analytic {expected_j:.3f} J), J/output token {per_token:.6f}"
            f" (analytic {expected_per_token:.6f})"
        )
        assert energy["power_coverage_valid"] is True
        assert energy["joules_per_output_token"] == pytest.approx(expected_per_token, rel=0.01)
        assert energy["gpu_energy_joules"] == pytest.approx(expected_j, rel=0.01)
        assert sorted(energy["per_node_joules"]) == ["node1", "node2"]
        assert energy["cpu_energy_joules"] is not None and energy["cpu_energy_joules"] > 0

    cpu = _read(job, CPU_DIR, "manifest.json")
    assert (cpu["status"], cpu["reason_codes"], cpu["required"]) == ("complete", [], True)
    assert (job.job_dir / "logs" / POWER_DIR / "cpu" / "samples.csv").stat().st_size > 0
    page = (job.job_dir / "logs" / "perf_dashboard.html").read_text()
    assert "J/output token" in page and "publishable" in page
    finalize_log = (job.job_dir / "logs" / "power-finalize.out").read_text()
    assert '"publication_valid": true' in finalize_log


@pytest.mark.parametrize("required", [False, True], ids=["best-effort", "required"])
def test_an_exporter_that_dies_mid_window_invalidates_the_power(
    srt: SrtOnSlurm, tmp_path: Path, required: bool
) -> None:
    job, status = _run(
        srt,
        tmp_path,
        start=time.time(),
        required=required,
        replay_flags="--die-after-s 9",
        name=f"e2e-power-dies-{'req' if required else 'opt'}",
    )
    manifest = _read(job, POWER_DIR, "manifest.json")
    assert manifest["publication_valid"] is False
    assert "exporter_exited" in manifest["reason_codes"]
    assert manifest["status"] == "incomplete"
    if required:
        assert (status["status"], status["exit_code"]) == ("failed", 1)
        assert "power-finalize" in srt.sweep_log(job)
    else:
        assert (status["status"], status["exit_code"]) == ("completed", 0)
        rollup = _read(job, "benchmark-rollup.json")
        assert rollup["power"]["publication_valid"] is False
        assert "exporter_exited" in rollup["power"]["reason_codes"]


def test_a_node_clock_off_by_seconds_is_reported(srt: SrtOnSlurm, tmp_path: Path) -> None:
    job, status = _run(
        srt,
        tmp_path,
        start=time.time(),
        required=False,
        replay_flags="--clock-offset-s 7",
        name="e2e-power-clock",
    )
    assert (status["status"], status["exit_code"]) == ("completed", 0)
    manifest = _read(job, POWER_DIR, "manifest.json")
    assert manifest["publication_valid"] is False
    assert "clock_sync_unverified" in manifest["reason_codes"]
