"""The one-screen diagnosis of real failed runs: a worker that dies in a Python traceback after
a long log, a frontend that panics after hundreds of long coloured lines, a worker stopped by a
fatal line in the middle of its output. Each block is at most 40 lines, names the process, its
node, the exit code or fatal line and the log's path, and shows the decisive line."""

from __future__ import annotations

import textwrap
from pathlib import Path

from rt_plans import execute, fake, plan, spec

from srt_runtime.diagnosis import LINE_CHARS, MAX_LINES, Failure, render_diagnosis

#: Room for the "    | " prefix and the cut marker of a line cut in its middle.
_WIDTH = LINE_CHARS + 40

# A worker in the style of an engine: 150 long INFO lines, then an exception raised 12 frames
# deep while handling another one.
_WORKER = textwrap.dedent(
    """
    import sys
    for i in range(150):
        print(f"\\x1b[32mINFO\\x1b[0m 2026-11-29 15:00:{i % 60:02d} [scheduler.py:412] "
              f"Decode batch {i}: #running-req: 12, #token: {i * 977}, token usage: 0.41, "
              f"gen throughput (token/s): 1234.56, #queue-req: 0, " + "x" * 120, flush=True)
    def load(depth):
        if depth == 0:
            try:
                {}["weights"]
            except KeyError:
                raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        load(depth - 1)
    load(12)
    """
)

# A frontend in the style of a Rust server: 300 coloured lines, an ERROR, then a panic.
_FRONTEND = textwrap.dedent(
    """
    import sys
    for i in range(300):
        print(f"\\x1b[2m2026-11-29T15:00:00.{i:06d}Z\\x1b[0m \\x1b[32m INFO\\x1b[0m "
              f"dynamo_llm::http::service: request {i} served model=qwen route=/v1/completions "
              + "y" * 400, flush=True)
    print("2026-11-29T15:00:01Z ERROR dynamo_runtime::transport: etcd lease lost", flush=True)
    print("thread 'main' panicked at lib/runtime/src/lib.rs:42:9: lease expired", flush=True)
    print("note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
          flush=True)
    sys.exit(101)
    """
)


def _check_screen(diagnosis: str) -> list[str]:
    lines = diagnosis.splitlines()
    assert len(lines) <= MAX_LINES, diagnosis
    assert all(len(line) <= _WIDTH for line in lines), max(lines, key=len)
    assert all("\x1b" not in line for line in lines)
    return lines


def test_a_worker_dead_in_a_traceback_after_a_long_log(tmp_path: Path, job_dir: Path) -> None:
    worker = tmp_path / "worker.py"  # a file, so that the traceback shows its source lines
    worker.write_text(_WORKER)
    job_plan = plan(
        spec(
            "decode_0_node-02",
            ("python", str(worker)),
            role="decode",
            node="node-02",
            log_file="node-02_decode_w0.out",
        ),
        spec("benchmark", fake("on-term", "forever"), kind="benchmark", phase="benchmark"),
    )

    run = execute(job_plan, job_dir)

    assert run.exit_code == 1
    lines = _check_screen(run.diagnosis)
    log = job_dir / "logs" / "node-02_decode_w0.out"
    assert len(log.read_text().splitlines()) > 160  # the log itself is far longer
    assert lines[1:7] == [
        "RUN FAILED",
        "  what:   decode_0_node-02",
        "  node:   node-02",
        "  exit:   exit code 1",
        "  reason: decode_0_node-02 (worker decode) on node-02 exited with code 1",
        # it served (Decode batch lines) before it ran out of memory: the catalog's cause
        "  cause:  cuda_oom_runtime: CUDA out of memory under load (after the engine started "
        "serving)",
    ]
    assert lines[7].startswith("  fix:    Lower the engine's batch or token budget")
    assert lines[8] == f"  log:    {log}"
    assert lines[9].startswith("  decisive lines of the log (")
    shown = [line[6:] for line in lines if line.startswith("    | ")]
    # The last traceback's header, its innermost frame and its exception, the last line.
    assert "Traceback (most recent call last):" in shown
    assert '    raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")' in shown
    assert shown[-1] == "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"
    assert "KeyError: 'weights'" in shown  # the exception it was handling
    assert len(shown) <= 12
    assert any(line.startswith("    ... ") and "lines not shown" in line for line in lines)


def test_a_frontend_that_panics_after_hundreds_of_long_lines(job_dir: Path) -> None:
    job_plan = plan(
        spec("agg_0", fake("on-term", "forever"), role="agg"),
        spec(
            "frontend_0",
            ("python", "-c", _FRONTEND),
            kind="frontend",
            phase="frontends",
            log_file="node-01_frontend_0.out",
        ),
        spec("benchmark", fake("on-term", "forever"), kind="benchmark", phase="benchmark"),
    )

    run = execute(job_plan, job_dir)

    assert run.exit_code == 1
    lines = _check_screen(run.diagnosis)
    log = job_dir / "logs" / "node-01_frontend_0.out"
    assert "  what:   frontend_0" in lines
    assert "  node:   node-01" in lines
    assert "  exit:   exit code 101" in lines
    assert f"  log:    {log}" in lines
    shown = [line[6:] for line in lines if line.startswith("    | ")]
    assert "thread 'main' panicked at lib/runtime/src/lib.rs:42:9: lease expired" in shown
    assert "2026-11-29T15:00:01Z ERROR dynamo_runtime::transport: etcd lease lost" in shown
    # A long request line is cut in its middle, colours removed, both ends kept.
    cut = [line for line in shown if "[... " in line]
    assert cut and cut[0].startswith("2026-11-29T15:00:00.") and cut[0].endswith("y" * 40)


def test_a_fatal_line_in_the_middle_of_the_output_is_shown_with_its_context(
    job_dir: Path,
) -> None:
    before = [f"step {i}: loading shard {i} of 120 " + "z" * 150 for i in range(120)]
    fatal = "NCCL WARN Cuda failure 'an illegal memory access was encountered'"
    after = [f"rank {i}: waiting for peers" for i in range(60)]
    steps: list[object] = []
    for text in [*before, fatal, *after]:
        steps += ["say", text]
    job_plan = plan(
        spec(
            "prefill_0_node-01",
            fake(*steps, "on-term", "forever"),
            role="prefill",
            fatal_log_patterns=(r"NCCL WARN",),
        ),
        spec("benchmark", fake("on-term", "forever"), kind="benchmark", phase="benchmark"),
    )

    run = execute(job_plan, job_dir)

    assert run.exit_code == 1
    lines = _check_screen(run.diagnosis)
    assert "  what:   prefill_0_node-01" in lines
    assert "  node:   node-01" in lines
    assert f"  line:   {fatal}" in lines
    assert f"  log:    {job_dir / 'logs' / 'prefill_0_node-01.out'}" in lines
    shown = [line[6:] for line in lines if line.startswith("    | ")]
    at = shown.index(fatal)
    assert shown[at - 1].startswith("step 119: loading shard 119 of 120 ")  # what came before


def test_any_tail_renders_within_one_screen() -> None:
    failure = Failure(
        what="decode_3",
        node="node-07",
        exit_code=-9,
        log_line="E" * 5000,
        log_path="/jobs/4242/logs/node-07_decode_w3.out",
        reason="decode_3 (worker decode) on node-07 printed a fatal line: " + "E" * 5000,
        detected_at=0.0,
    )
    noisy = [f"ERROR {i} " + "\x1b[31mred\x1b[0m\r\t" * 600 for i in range(200)]
    tracebacks = ["Traceback (most recent call last):", '  File "a.py", line 1', "ValueError: x"]

    for tail in (noisy, tracebacks * 70, ["plain"] * 200, []):
        lines = _check_screen(render_diagnosis(failure, tail))
        assert "  exit:   killed by signal 9" in lines
        assert "  log:    /jobs/4242/logs/node-07_decode_w3.out" in lines
        assert len([line for line in lines if line.startswith("    | ")]) <= 12
