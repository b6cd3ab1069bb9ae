"""A manual recipe really serves: ``srtctl apply --local`` of the quickstart with
``benchmark.type: manual`` (the real Dynamo frontend and mocker workers) keeps serving after the
health gate until ``srtctl cancel``, then ends ``cancelled`` with nothing of the job left running.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from cli_testkit import Invoke
from local_jobs import MARKER, ROOT, SRTCTL
from local_jobs import job_status as _status
from local_jobs import marked as _marked
from local_jobs import wait_for as _wait_for

#: How long the job must keep serving after its health gate.
SERVE_SECONDS = 20.0
SERVES = (
    "serves until cancelled (srtctl cancel <job_id>) or the time limit: no benchmark; every worker "
    "and frontend stays up and supervised"
)


def test_dry_run_says_when_a_job_serves(invoke: Invoke, manual_recipe: Path) -> None:
    quickstart = str(ROOT / "examples" / "quickstart.yaml")
    manual = invoke("dry-run", "-f", str(manual_recipe))
    serve_only = invoke("dry-run", "-f", quickstart, "--serve-only")
    benchmark = invoke("dry-run", "-f", quickstart)
    streamed = invoke("dry-run", "-f", quickstart, "--set", "benchmark.stream_output=true")
    for result in (manual, serve_only, benchmark, streamed):
        assert result.exit_code == 0, result.output
    assert SERVES in manual.stdout.splitlines()
    assert SERVES in serve_only.stdout.splitlines()
    assert "] benchmark on " not in serve_only.stdout
    assert SERVES not in benchmark.stdout
    assert "benchmark output: every line of benchmark.out is mirrored" not in benchmark.stdout
    assert "benchmark output: every line of benchmark.out is mirrored to the sweep log" in (
        streamed.stdout.splitlines()
    )


@pytest.mark.slow
def test_manual_recipe_serves_until_cancel(
    invoke: Invoke, manual_recipe: Path, marker: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    child = subprocess.Popen(
        [*SRTCTL, "apply", "--local", "-f", str(manual_recipe), "-o", str(out)],
        env={**os.environ, MARKER: marker},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        _wait_for(lambda: out.is_dir() and any(out.iterdir()), "the job folder", 60, child)
        (job_dir,) = [p for p in out.iterdir() if p.is_dir()]
        job_id = job_dir.name
        _wait_for(lambda: _status(job_dir).get("stage") == "serving", "stage serving", 240, child)
        plan = json.loads((job_dir / "plan.json").read_text())
        assert plan["serve_only"] is True
        assert not [p for p in plan["processes"] if p["phase"] in ("benchmark", "post_eval")]
        running = _marked(marker)

        time.sleep(SERVE_SECONDS)

        status = _status(job_dir)
        assert (status["stage"], status["status"]) == ("serving", "running"), status
        assert child.poll() is None  # read after the SERVE_SECONDS sleep: still serving
        assert sorted(_marked(marker)) == sorted(running)  # every worker and frontend still up
        answer = httpx.post(
            f"{plan['frontend_url']}/v1/completions",
            json={"model": plan["served_model_name"], "prompt": "hello world", "max_tokens": 4},
            timeout=60,
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["usage"]["completion_tokens"] > 0
        sweep = (job_dir / "logs" / f"sweep_{job_id}.log").read_text()
        assert (
            f"until the job is cancelled or its time limit; stop it with: srtctl cancel {job_id}"
            in sweep
        )

        cancel = invoke("cancel", job_id, "-o", str(out))
        assert cancel.exit_code == 0, cancel.output
        assert cancel.stdout.startswith(f"sent SIGTERM to the supervisor of {job_id}")
        output, _ = child.communicate(timeout=120)

        final = _status(job_dir)
        assert (final["stage"], final["status"], final["exit_code"]) == ("cleanup", "cancelled", 1)
        assert final["message"] == "stopped: received SIGTERM during stage serving"
        assert child.returncode != 0, output[-3000:]
        deadline = time.monotonic() + 5.0
        while _marked(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _marked(marker) == [], "processes of the job left running"
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate(timeout=60)


@pytest.mark.slow
def test_status_counts_the_ready_workers_of_a_real_local_job_from_its_events(
    invoke: Invoke, manual_recipe: Path, marker: str, tmp_path: Path
) -> None:
    """`srtctl status --json` of a serving job reports every planned worker ready, and that
    comes from the runtime's status_events.jsonl (process and health events), not from logs."""
    from srt_runtime.status import HealthPassed, ProcessEvent, decode_event_lines

    out = tmp_path / "out"
    child = subprocess.Popen(
        [*SRTCTL, "apply", "--local", "-f", str(manual_recipe), "-o", str(out)],
        env={**os.environ, MARKER: marker},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        _wait_for(lambda: out.is_dir() and any(out.iterdir()), "the job folder", 60, child)
        (job_dir,) = [p for p in out.iterdir() if p.is_dir()]
        job_id = job_dir.name
        _wait_for(lambda: _status(job_dir).get("stage") == "serving", "stage serving", 240, child)
        plan = json.loads((job_dir / "plan.json").read_text())
        workers = sorted(p["name"] for p in plan["processes"] if p["kind"] == "worker")
        assert len(workers) == 2

        status = invoke("status", job_id, "-o", str(out), "--json")
        assert status.exit_code == 0, status.output
        doc = json.loads(status.stdout)
        assert (doc["stage"], doc["status"]) == ("serving", "running")
        assert doc["workers"] == {"ready": len(workers), "total": len(workers)}

        events = decode_event_lines((job_dir / "status_events.jsonl").read_bytes())
        started = sorted(
            e.process
            for e in events
            if isinstance(e, ProcessEvent) and e.what == "started" and e.kind == "worker"
        )
        assert started == workers
        assert [e.url for e in events if isinstance(e, HealthPassed)] == [plan["health"]["url"]]

        cancel = invoke("cancel", job_id, "-o", str(out))
        assert cancel.exit_code == 0, cancel.output
        child.communicate(timeout=120)
        assert _status(job_dir)["status"] == "cancelled"
        events = decode_event_lines((job_dir / "status_events.jsonl").read_bytes())
        exited = sorted(
            e.process
            for e in events
            if isinstance(e, ProcessEvent) and e.what == "exited" and e.kind == "worker"
        )
        assert exited == workers
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate(timeout=60)


STREAM_RECIPE = """\
schema: 2
name: stream
model: {path: "hf:example/none", container: "nvcr.io#nvidia/none:1", precision: bf16}
resources: {gpus_per_node: 1}
frontend: {type: none}
benchmark:
  type: custom
  command: "echo first-line; echo second-line"
  stream_output: STREAM
services:
  - {name: idle, type: generic, command: [sleep, "600"], nodes: 1}
"""


def test_stream_output_in_a_real_local_run(tmp_path: Path) -> None:
    """``benchmark.stream_output`` in a real ``srtctl apply --local``: the client's lines appear in
    apply's output and the sweep log while it runs, marked, and only when asked for."""
    seen: dict[bool, tuple[str, str]] = {}
    for stream in (True, False):
        recipe = tmp_path / f"stream-{stream}.yaml"
        recipe.write_text(STREAM_RECIPE.replace("STREAM", str(stream).lower()))
        out = tmp_path / f"out-{stream}"
        done = subprocess.run(
            [*SRTCTL, "apply", "--local", "-f", str(recipe), "-o", str(out)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        (job_dir,) = [p for p in out.iterdir() if p.is_dir()]
        sweep = (job_dir / "logs" / f"sweep_{job_dir.name}.log").read_text()
        assert (job_dir / "logs" / "benchmark.out").read_text() == "first-line\nsecond-line\n"
        seen[stream] = (done.stdout + done.stderr, sweep)
    for text in seen[True]:
        assert "INFO [benchmark.out] first-line\n" in text
        assert "INFO [benchmark.out] second-line\n" in text
    for text in seen[False]:
        assert "[benchmark.out]" not in text
