"""``python -m srt_runtime run`` as a real subprocess: exit codes, the diagnosis at the end of
the output and of the sweep log, and a real SIGTERM (what scancel sends)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from rt_plans import awaits, fake, plan, read_trace, spec, wait_for_text

from srt_planner.plan import JobPlan
from srt_runtime.plan_io import read_plan, write_plan


def _start(job_dir: Path, job_plan: JobPlan | None) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "srt_runtime", "run", "--job-dir", str(job_dir)]
    if job_plan is not None:
        plan_file = job_dir.parent / "input-plan.json"
        write_plan(job_plan, plan_file)
        argv += ["--plan", str(plan_file)]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_successful_run(job_dir: Path) -> None:
    job_plan = plan(
        spec(
            "benchmark",
            fake("say", "result 42"),
            kind="benchmark",
            phase="benchmark",
            log_file="benchmark.out",
        )
    )

    proc = _start(job_dir, job_plan)
    out, err = proc.communicate(timeout=60)

    assert proc.returncode == 0, out + err
    assert read_plan(job_dir / "plan.json") == job_plan
    assert (job_dir / "logs" / "benchmark.out").read_text() == "result 42\n"
    assert json.loads((job_dir / "status.json").read_text())["status"] == "completed"
    sweep = (job_dir / "logs" / "sweep_4242.log").read_text()
    assert "Starting benchmark on node-01" in sweep
    assert "Resources on node-01: " in sweep
    snapshot = json.loads((job_dir / "logs" / "resource_snapshot.json").read_text())
    assert (snapshot["node"], snapshot["affinity_cpus"]) == (
        "node-01",
        len(os.sched_getaffinity(0)),
    )


def test_a_failed_run_ends_its_output_and_sweep_log_with_the_diagnosis(job_dir: Path) -> None:
    job_plan = plan(
        spec(
            "decode_0_node-02",
            fake("say", "OOM", "exit", 137),
            role="decode",
            node="node-02",
            log_file="node-02_decode_w0.out",
        ),
        spec("benchmark", fake("on-term", "forever"), kind="benchmark", phase="benchmark"),
    )

    proc = _start(job_dir, job_plan)
    out, _ = proc.communicate(timeout=60)

    assert proc.returncode == 1
    log = job_dir / "logs" / "node-02_decode_w0.out"
    expected_tail = [
        "RUN FAILED",
        "  what:   decode_0_node-02",
        "  node:   node-02",
        "  exit:   exit code 137",
        "  reason: decode_0_node-02 (worker decode) on node-02 exited with code 137",
        # exit code 137 is the failure catalog's `killed` (SIGKILL, the OOM killer most often)
        "  cause:  killed: the process was killed by SIGKILL (most often the kernel's OOM killer "
        "or a memory limit)",
        "  fix:    Check host memory (dmesg | grep -i oom on the node, Slurm's --mem); lower what "
        "the process holds in host memory (fewer loader workers, smaller CPU caches), or give "
        "the job more memory.",
        f"  log:    {log}",
        "  last 1 lines of the log:",
        "    | OOM",
        "=" * 72,
    ]
    assert out.splitlines()[-11:] == expected_tail
    sweep = (job_dir / "logs" / "sweep_4242.log").read_text().splitlines()
    assert sweep[-11:] == expected_tail


def test_sigterm_stops_the_run_cleans_up_and_exits_1(job_dir: Path, trace: Path) -> None:
    job_plan = plan(
        spec("agg_0", fake("on-term", "trace", trace, "forever"), role="agg"),
        spec(
            "benchmark",
            fake(
                "on-term",
                "trace",
                trace,
                *awaits(trace, "agg_0 start", 1),
                "say",
                "running",
                "forever",
            ),
            kind="benchmark",
            phase="benchmark",
        ),
        teardown=(spec("teardown", fake("trace", trace), kind="service", phase="host_setup"),),
    )

    proc = _start(job_dir, job_plan)
    wait_for_text(job_dir / "logs" / "benchmark.out", "running")
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)

    assert proc.returncode == 1
    assert "Received SIGTERM, initiating cleanup..." in out
    assert "  reason: stopped: received SIGTERM during stage benchmark\n" in out
    lines = read_trace(trace)
    assert sorted(lines[:4]) == ["agg_0 start", "agg_0 term", "benchmark start", "benchmark term"]
    assert lines[4:] == ["teardown start"]
    status = json.loads((job_dir / "status.json").read_text())
    assert (status["status"], status["exit_code"]) == ("cancelled", 1)


def test_a_plan_that_does_not_decode_is_named(job_dir: Path) -> None:
    bad = job_dir.parent / "bad.json"
    bad.write_text('{"job_id": 5}')
    proc = subprocess.run(
        [sys.executable, "-m", "srt_runtime", "run", "--job-dir", str(job_dir), "--plan", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert proc.returncode == 1
    assert proc.stderr == (
        f"srt_runtime: {bad}: not a valid JobPlan: Expected `str`, got `int` - at `$.job_id`\n"
    )


def test_without_a_plan_outside_slurm_the_run_is_refused(job_dir: Path) -> None:
    proc = _start(job_dir, None)
    _, err = proc.communicate(timeout=60)

    assert proc.returncode == 1
    assert err == (
        "srt_runtime: Not running in SLURM: SLURM_JOB_ID is not set; run inside an allocation, "
        "or pass an already-planned job with --plan <plan.json>\n"
    )
