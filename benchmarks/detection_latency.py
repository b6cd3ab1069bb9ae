"""srt-runtime failure detection latency: how long after a critical worker dies (SIGKILL) or
prints a fatal log line does the supervisor decide to abort the run?

Run from the repository root:  uv run --frozen python benchmarks/detection_latency.py
(`--trials 20`). Each trial runs a real supervisor (LocalLauncher, a real worker process, a
benchmark process it waits on) in a temporary job directory, then either kills the worker or
appends a fatal line to its log, and measures from that moment to ``Failure.detected_at`` (the
supervisor's abort decision) and to the end of the run (cleanup done, exit code known).
Prints numbers; asserts nothing. Target (issue 6): under 1 s from the kill to the decision.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from srt_planner.plan import HealthGate, JobPlan, NodeRoles, ProcessSpec
from srt_runtime.clock import SystemClock
from srt_runtime.launch import LocalLauncher
from srt_runtime.run import RunResult, run_job
from srt_runtime.status import FileStatusSink
from srt_runtime.supervisor import Supervisor

FATAL = "RuntimeError: CUDA error: an illegal memory access was encountered"


def _plan() -> JobPlan:
    worker = ProcessSpec(
        name="decode_0_node-01",
        kind="worker",
        role="decode",
        nodes=("node-01",),
        argv=("python", "-c", "import time; print('worker ready', flush=True); time.sleep(600)"),
        log_file="node-01_decode_w0.out",
        phase="workers",
        fatal_log_patterns=(r"CUDA error",),
    )
    bench = ProcessSpec(
        name="benchmark",
        kind="benchmark",
        role="benchmark",
        nodes=("node-01",),
        argv=("python", "-c", "import time; print('bench running', flush=True); time.sleep(600)"),
        log_file="benchmark.out",
        phase="benchmark",
    )
    return JobPlan(
        job_id="1",
        job_name="latency",
        nodes=("node-01",),
        node_roles=NodeRoles(head="node-01", infra="node-01", bench="node-01"),
        container_runtime="none",
        launcher="local",
        processes=(worker, bench),
        health=HealthGate(family="none", url=""),
        frontend_url="http://127.0.0.1:1",
        served_model_name="m",
    )


def _wait_text(path: Path, text: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text():
            return
        time.sleep(0.01)
    raise SystemExit(f"{path} never showed {text!r}")


def _trial(mode: str) -> tuple[float, float, float]:
    """(trigger -> watcher saw it, trigger -> abort decision, trigger -> run finished)."""
    with tempfile.TemporaryDirectory() as tmp:
        job_dir = Path(tmp) / "1"
        log_dir = job_dir / "logs"
        log_dir.mkdir(parents=True)
        plan, clock = _plan(), SystemClock()
        launcher = LocalLauncher(log_dir)
        sup = Supervisor(plan, launcher, log_dir=log_dir, clock=clock)
        sink = FileStatusSink(job_dir, plan.job_id, clock)
        result: list[RunResult] = []
        thread = threading.Thread(
            target=lambda: result.append(
                run_job(plan, launcher, sink, job_dir=job_dir, clock=clock, supervisor=sup)
            )
        )
        thread.start()
        _wait_text(log_dir / "node-01_decode_w0.out", "worker ready")
        _wait_text(log_dir / "benchmark.out", "bench running")
        worker = next(p for p in sup.procs if p.spec.name == "decode_0_node-01")
        if mode == "kill":
            t0 = time.monotonic()
            os.kill(worker.handle.pid, signal.SIGKILL)
        else:
            with (log_dir / "node-01_decode_w0.out").open("a") as log:
                log.write(FATAL + "\n")
            t0 = time.monotonic()
        thread.join(60)
        finished = time.monotonic()
        failure = result[0].failure
        assert failure is not None and result[0].exit_code == 1, result
        seen = (failure.seen_at or failure.detected_at) - t0
        return seen, failure.detected_at - t0, finished - t0


def _summary(label: str, values: list[float]) -> str:
    ms = sorted(v * 1000 for v in values)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return (
        f"  {label:<34} median {statistics.median(ms):7.1f} ms   p95 {p95:7.1f} ms   "
        f"min {ms[0]:7.1f} ms   max {ms[-1]:7.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--trials", type=int, default=20)
    args = parser.parse_args()
    print(
        f"srt-runtime detection latency ({args.trials} trials each, {os.cpu_count()} CPUs, "
        f"Python {sys.version.split()[0]})"
    )
    for mode, what in (
        ("kill", "SIGKILL of a critical worker"),
        ("fatal", "fatal log line of a critical worker"),
    ):
        rows = [_trial(mode) for _ in range(args.trials)]
        print(f"{what}:")
        print(_summary("trigger -> event seen", [r[0] for r in rows]))
        print(_summary("trigger -> abort decision", [r[1] for r in rows]))
        print(_summary("trigger -> run finished (cleanup)", [r[2] for r in rows]))
    print("target: trigger -> abort decision under 1000 ms (issue 6)")


if __name__ == "__main__":
    main()
