"""Profiling in real Slurm jobs on slurm-lab (docs/telemetry-and-bench.md#profiling): SGLang
workers on two nodes (their own network namespaces) replaced by stand-ins behind the real
sglang-router, the benchmark on its node sending the start/stop-profile requests across the
network, and the ``profiles`` finalize step listing what the workers wrote into the shared log
folder. A second job runs automatic Nsight capture: each worker's srun step holds the nsys session
and the watcher that the benchmark's markers start and stop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from e2e_jobs import SrtOnSlurm, Submission

REPO = Path(__file__).resolve().parents[2]
RECIPE = REPO / "tests" / "recipes" / "sglang-agg-sglang-router.yaml"
SHORT = ("--set", "benchmark.concurrencies=[2]", "--set", "benchmark.osl=8")
SHORT += ("--set", "benchmark.isl=32", "--set", "health_check.interval_seconds=1")
SHORT += ("--set", "benchmark.random_range_ratio=1.0")


def _run(srt: SrtOnSlurm, *sets: str) -> tuple[Submission, Path, dict[str, Any]]:
    job = srt.apply_one(RECIPE, "--stand-in-engines", *SHORT, *sets)
    status = srt.wait(job, timeout=180.0)
    assert (status["status"], status["exit_code"]) == ("completed", 0), status
    plan: dict[str, Any] = json.loads((job.job_dir / "plan.json").read_text())
    assert plan["launcher"] == "slurm"
    return job, job.job_dir / "logs", plan


def test_torch_windows_reach_workers_on_other_nodes(srt: SrtOnSlurm) -> None:
    sets = ["--set", "profiling.type=torch", "--set", "profiling.aggregated.start_step=1"]
    sets += ["--set", "profiling.aggregated.stop_step=4"]
    _, logs, plan = _run(srt, *sets)
    workers = [p for p in plan["processes"] if p["kind"] == "worker"]
    assert sorted(w["nodes"][0] for w in workers) == ["node1", "node2"]
    sent = [
        json.loads(line) for line in (logs / "profiles" / "control.jsonl").read_text().splitlines()
    ]
    starts = [e for e in sent if e["action"] == "start"]
    # one start per worker, each to its own node's address, each accepted
    assert sorted(e["worker"] for e in starts) == ["agg_w0", "agg_w1"]
    assert all(e["status"] == 200 for e in starts)
    assert len({e["url"].split("/")[2] for e in starts}) == 2
    traces = sorted((logs / "profiles" / "agg").glob("standin-agg-*.trace.json"))
    assert len(traces) == 2
    for path in traces:
        trace = json.loads(path.read_text())
        assert trace["request"]["start_step"] == 1 and trace["request"]["num_steps"] == 3
        assert trace["request"]["activities"] == ["CPU", "GPU"]
    rollup = json.loads((logs / "benchmark-rollup.json").read_text())
    listed = {f["path"] for f in rollup["profiles"]["files"]}
    assert {p.relative_to(logs).as_posix() for p in traces} <= listed
    assert rollup["profiles"]["missing"] == []


def test_automatic_nsys_sessions_follow_the_benchmark_markers(srt: SrtOnSlurm) -> None:
    sets = ["--set", "observability.enabled=true", "--set", "benchmark.req_rate=10"]
    sets += ["--set", "observability.nsys.report_timeout_secs=60"]
    _, logs, plan = _run(srt, *sets)
    workers = [p for p in plan["processes"] if p["kind"] == "worker"]
    assert all(w["argv"][3] == "launch" for w in workers)
    markers = logs / "profiles" / ".control"
    start = float((markers / "measured_workload.start").read_text())
    reports = sorted((logs / "profiles" / "agg").glob("*.nsys-rep"))
    # one report per worker node, each written by that node's own srun step
    assert sorted(p.name.split("_")[0] for p in reports) == ["node1", "node2"]
    for path in reports:
        report = json.loads(path.read_text())
        assert report["command"] == "launch/start/stop"
        assert start <= report["started_at"] <= start + 2.0
    rollup = json.loads((logs / "benchmark-rollup.json").read_text())
    assert rollup["profiles"]["missing"] == []
