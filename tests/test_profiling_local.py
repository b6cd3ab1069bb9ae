"""Profiling runs end to end on the local launcher (docs/telemetry-and-bench.md#profiling):
SGLang workers replaced by stand-ins (and ``nsys`` by the stand-in profiler) behind the real
sglang-router, the real benchmark client sending the start/stop-profile requests, the plan's
``profiles`` finalize step listing what was written.

What the tests look at is what the job produced: the traces the stand-in engines wrote for the
requests they received (the exact request bodies, the steps they captured), the benchmark's
record of what it sent, the Nsight reports and the rollup's ``profiles`` block.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "tests" / "recipes" / "sglang-agg-sglang-router.yaml"
SHORT = ["--set", "benchmark.concurrencies=[2]", "--set", "benchmark.osl=8"]
SHORT += ["--set", "benchmark.isl=32", "--set", "health_check.interval_seconds=1"]
SHORT += ["--set", "benchmark.random_range_ratio=1.0"]

pytestmark = pytest.mark.slow


def _apply(out: Path, *sets: str, recipe: Path = RECIPE) -> tuple[Path, dict[str, Any]]:
    srtctl = shutil.which("srtctl")
    assert srtctl is not None, "srtctl is not installed in this environment (make sync)"
    argv = [srtctl, "apply", "--local", "--stand-in-engines", "-f", str(recipe), "-o", str(out)]
    argv += [*SHORT, *sets]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=400, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [job_dir] = [p for p in out.iterdir() if p.is_dir() and p.name.startswith("local-")]
    status = json.loads((job_dir / "status.json").read_text())
    assert (status["status"], status["exit_code"]) == ("completed", 0)
    return job_dir / "logs", json.loads((job_dir / "plan.json").read_text())


def test_torch_profiling_sends_the_recipe_windows_and_lists_the_traces(tmp_path: Path) -> None:
    sets = ["--set", "profiling.type=torch"]
    sets += [
        "--set",
        "profiling.aggregated.start_step=2",
        "--set",
        "profiling.aggregated.stop_step=5",
    ]
    logs, plan = _apply(tmp_path, *sets)
    # one trace per worker (2 stand-ins behind the router), each for the request it was sent
    traces = sorted((logs / "profiles" / "agg").glob("standin-agg-*.trace.json"))
    assert len(traces) == 2, [p.name for p in (logs / "profiles").rglob("*")]
    for path in traces:
        trace = json.loads(path.read_text())
        assert trace["request"] == {
            "output_dir": str(logs / "profiles" / "agg"),
            "start_step": 2,
            "num_steps": 3,
            "activities": ["CPU", "GPU"],
        }
        # the window counts from the start request: steps 2, 3, 4, then the capture ends
        # itself, or the benchmark's stop ends it earlier on a worker that saw fewer requests
        assert trace["ended_by"] in ("num_steps", "stop_profile")
        if trace["ended_by"] == "num_steps":
            assert trace["captured_steps"] == [2, 3, 4]
    # the benchmark sent start before its first request and stop after its last
    sent = [
        json.loads(line) for line in (logs / "profiles" / "control.jsonl").read_text().splitlines()
    ]
    assert [(e["action"], e["status"]) for e in sent if e["action"] == "start"] == [
        ("start", 200),
        ("start", 200),
    ]
    assert {e["url"].rsplit("/", 1)[-1] for e in sent} == {"start_profile", "stop_profile"}
    [result] = list(logs.glob("sa-bench_*/*.json"))
    measured = json.loads(result.read_text())
    first_start = min(e["time"] for e in sent if e["action"] == "start")
    last_stop = max(e["time"] for e in sent if e["action"] == "stop")
    assert first_start < measured["benchmark_start_time_unix"]
    assert last_stop > measured["benchmark_end_time_unix"]
    # the finalize step put them in the rollup
    rollup = json.loads((logs / "benchmark-rollup.json").read_text())
    listed = {f["path"] for f in rollup["profiles"]["files"]}
    assert {p.relative_to(logs).as_posix() for p in traces} <= listed
    assert rollup["profiles"]["missing"] == []
    [step] = [s for s in plan["finalize"] if s["name"] == "profiles"]
    assert "--expect-dir" in step["argv"]
    # and the dashboard links them
    html = (logs / "perf_dashboard.html").read_text()
    assert '<h2 id="profiles">Profiles</h2>' in html
    assert all(f'href="{p.relative_to(logs).as_posix()}"' in html for p in traces)


def test_nsys_wrapper_report_is_waited_for_and_listed(tmp_path: Path) -> None:
    sets = ["--set", "profiling.type=nsys"]
    sets += [
        "--set",
        "profiling.aggregated.start_step=0",
        "--set",
        "profiling.aggregated.stop_step=4",
    ]
    sets += ["--set", 'environment.SRT_STANDIN_NSYS_REPORT_DELAY="2"']
    logs, plan = _apply(tmp_path, *sets)
    workers = [p for p in plan["processes"] if p["kind"] == "worker"]
    for w in workers:
        assert w["argv"][1:5] == ["-m", "srt_runtime.standin.nsys", "profile", "-t"]
        assert "cudaProfilerApi" in w["argv"] and "srt_runtime.standin" in w["argv"]
        assert w["stop_grace_seconds"] == 1800.0  # observability.nsys.report_timeout_secs
    reports = sorted((logs / "profiles" / "agg").glob("*.nsys-rep"))
    assert len(reports) == 2
    report = json.loads(reports[0].read_text())
    # written after the program ended (the stop), 2 s later: the supervisor waited for it
    assert report["written_at"] - report["started_at"] > 2.0
    rollup = json.loads((logs / "benchmark-rollup.json").read_text())
    assert {p.relative_to(logs).as_posix() for p in reports} <= {
        f["path"] for f in rollup["profiles"]["files"]
    }
    assert rollup["profiles"]["missing"] == []
    sent = (logs / "profiles" / "control.jsonl").read_text()
    assert '"activities":["CUDA_PROFILER"]' in sent


def test_a_report_slower_than_the_timeout_is_named_missing(tmp_path: Path) -> None:
    sets = ["--set", "profiling.type=nsys"]
    sets += [
        "--set",
        "profiling.aggregated.start_step=0",
        "--set",
        "profiling.aggregated.stop_step=4",
    ]
    sets += ["--set", "observability.nsys.report_timeout_secs=3"]
    sets += ["--set", 'environment.SRT_STANDIN_NSYS_REPORT_DELAY="30"']
    logs, plan = _apply(tmp_path, *sets)
    workers = [p for p in plan["processes"] if p["kind"] == "worker"]
    assert {w["stop_grace_seconds"] for w in workers} == {10.0}
    assert list((logs / "profiles" / "agg").glob("*.nsys-rep")) == []
    rollup = json.loads((logs / "benchmark-rollup.json").read_text())
    missing = rollup["profiles"]["missing"]
    assert len(missing) == 2 and all("no Nsight report" in m for m in missing)
    assert "profile missing:" in (logs / "profiles.out").read_text()
    html = (logs / "perf_dashboard.html").read_text()
    assert html.count('<li class="warn">') == 2 and "no Nsight report" in html


def test_automatic_nsys_captures_the_measured_workload(tmp_path: Path) -> None:
    sets = ["--set", "observability.enabled=true"]
    sets += ["--set", "observability.nsys.report_timeout_secs=60"]
    # 20 measured requests at 10/s: a measured workload of about 2 s
    sets += ["--set", "benchmark.req_rate=10"]
    logs, plan = _apply(tmp_path, *sets)
    workers = [p for p in plan["processes"] if p["kind"] == "worker"]
    for w in workers:
        assert w["argv"][3] == "launch" and w["argv"][4].startswith("--session-new=srt_")
        assert any("measured_workload.start" in line for line in w["preamble"])
    markers = logs / "profiles" / ".control"
    start = float((markers / "measured_workload.start").read_text())
    stop = float((markers / "measured_workload.stop").read_text())
    [result] = list(logs.glob("sa-bench_*/*.json"))
    measured = json.loads(result.read_text())
    # the markers bracket the measured requests (and not the warmup before them)
    assert start <= measured["benchmark_start_time_unix"]  # order: marker, then first request
    assert stop >= measured["benchmark_end_time_unix"]  # order: last request, then marker
    reports = sorted((logs / "profiles" / "agg").glob("*.nsys-rep"))
    assert len(reports) == 2
    for path in reports:
        report = json.loads(path.read_text())
        assert report["command"] == "launch/start/stop"
        # the capture started on the start marker, not when nsys launched the worker
        assert start <= report["started_at"]  # order: marker written, then capture started
        assert report["options"]["--sample"] == "system-wide"  # cpu_sampling's default
    rollup = json.loads((logs / "benchmark-rollup.json").read_text())
    assert rollup["profiles"]["missing"] == []


#: The router recipe made disaggregated (one prefill, one decode worker): no profiling phase
#: block, as the timed capture applies to every worker.
DISAGG = """
schema: 2
name: own-sglang-disagg-router-timed
model: {path: /models/tiny, container: sglang, precision: bf16}
resources: {gpus_per_node: 4}
engine: sglang
roles:
  prefill: {nodes: 1, workers: 1, args: {served-model-name: own/tiny, tensor-parallel-size: 4}}
  decode: {nodes: 1, workers: 1, args: {served-model-name: own/tiny, tensor-parallel-size: 4}}
frontend: {type: sglang-router, enable_multiple_frontends: false}
benchmark: {type: sa-bench, isl: 128, osl: 128, concurrencies: [2]}
profiling:
  type: nsys-time
  delay_secs: 0
  duration_secs: 1
  benchmark_duration_secs: 6
  nsys_trace: cuda,nvtx,osrt
  extra_nsys_args: [--stats=false]
  trace_fork_before_exec: true
  nsys_library_paths: [/opt/srt-nsys/lib, /opt/srt-nsys/lib64]
"""


def test_a_timed_capture_wraps_every_worker_and_the_traffic_lasts_long_enough(
    tmp_path: Path,
) -> None:
    recipe = tmp_path / "disagg-timed.yaml"
    recipe.write_text(DISAGG)
    logs, plan = _apply(tmp_path / "out", recipe=recipe)
    workers = [p for p in plan["processes"] if p["kind"] == "worker"]
    assert sorted(w["role"] for w in workers) == ["decode", "prefill"]
    # every worker of both phases is captured, with the recipe's window
    for role in ("prefill", "decode"):
        [path] = list((logs / "profiles" / role).glob("*.nsys-rep"))
        report = json.loads(path.read_text())
        assert report["command"] == "profile"
        assert (report["options"]["--delay"], report["options"]["--duration"]) == ("0", "1")
        assert "-c" not in report["options"]  # a timed capture, not a cudaProfilerApi range
        # the Nsight knobs reach the profiler: its trace domains, the extra argument, fork
        # tracing, and the library folders in front of the step's own LD_LIBRARY_PATH
        assert report["options"]["-t"] == "cuda,nvtx,osrt"
        assert report["options"]["--stats"] == "false"
        assert report["options"]["--trace-fork-before-exec"] == "true"
        assert report["ld_library_path"].startswith("/opt/srt-nsys/lib:/opt/srt-nsys/lib64")
    # the measured phase (2 x 10 prompts) ends in well under the 6 s benchmark_duration_secs:
    # srt-bench kept sending unmeasured rounds of the same load
    traffic = json.loads((logs / "profiles" / "traffic.json").read_text())
    assert traffic["target_seconds"] == 6 and traffic["concurrency"] == 2
    assert traffic["rounds"] >= 1 and traffic["requests"] == 20 * traffic["rounds"]
    assert traffic["failed"] == 0
    [result] = list(logs.glob("sa-bench_*/*.json"))
    assert json.loads(result.read_text())["completed"] == 20  # the extra rounds are not measured
    assert "profiling traffic:" in (logs / "benchmark.out").read_text()
