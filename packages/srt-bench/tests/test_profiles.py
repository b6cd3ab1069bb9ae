"""The benchmark side of profiling without a job: a worker that cannot be reached is recorded and
costs nothing else; the markers; what `srt-bench profiles` lists, names missing and writes."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from srt_bench.profile_control import (
    MARKER_START,
    MARKER_STOP,
    ProfileTarget,
    ProfilingControl,
    mark,
    start_profiles,
    stop_profiles,
)
from srt_bench.profiles import apply_profiles, collect_profiles


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_an_unreachable_worker_is_recorded_not_raised(tmp_path: Path) -> None:
    record = tmp_path / "profiles" / "control.jsonl"
    target = ProfileTarget(
        role="decode",
        worker="decode_w0",
        url=f"http://127.0.0.1:{_free_port()}",
        start_path="/engine/start_profile",
        stop_path="/engine/stop_profile",
        start_body={"output_dir": "/logs/profiles/decode", "start_step": 1, "num_steps": 2},
    )
    control = ProfilingControl(targets=(target,), record=str(record))
    lines: list[str] = []
    assert start_profiles(control, lines.append) == 0
    assert stop_profiles(control, lines.append) == 0
    entries = [json.loads(line) for line in record.read_text().splitlines()]
    assert [(e["action"], e["worker"]) for e in entries] == [
        ("start", "decode_w0"),
        ("stop", "decode_w0"),
    ]
    assert entries[0]["body"]["start_step"] == 1 and "ConnectError" in entries[0]["error"]
    assert entries[1]["body"] == {}
    assert lines[0].startswith("profiling: start decode_w0 (") and "failed" in lines[0]


def test_markers_are_written_only_with_a_marker_folder(tmp_path: Path) -> None:
    lines: list[str] = []
    mark(None, "start", lines.append)
    mark(ProfilingControl(record=str(tmp_path / "r.jsonl")), "start", lines.append)
    assert lines == [] and list(tmp_path.iterdir()) == []
    control = ProfilingControl(marker_dir=str(tmp_path / ".control"), record="r.jsonl")
    mark(control, "start", lines.append)
    mark(control, "stop", lines.append)
    start = float((tmp_path / ".control" / MARKER_START).read_text())
    stop = float((tmp_path / ".control" / MARKER_STOP).read_text())
    assert start <= stop
    assert [line.split()[3] for line in lines] == ["start", "stop"]


def test_profiles_lists_the_files_names_the_missing_and_fills_the_rollup(tmp_path: Path) -> None:
    (tmp_path / "profiles" / "decode").mkdir(parents=True)
    (tmp_path / "profiles" / "decode" / "n1_decode_w0_profile_gpu0.nsys-rep").write_bytes(b"x" * 7)
    (tmp_path / "profiles" / "decode" / ".partial").write_text("")
    (tmp_path / "profiles" / ".control").mkdir()
    (tmp_path / "profiles" / ".control" / MARKER_START).write_text("1\n")
    (tmp_path / "profiles" / "control.jsonl").write_text("{}\n")
    summary = collect_profiles(
        tmp_path,
        expect_nsys=(
            "profiles/decode/n1_decode_w0_profile_gpu0",
            "profiles/prefill/n1_prefill_w0_profile_gpu1",
        ),
        expect_dirs=("decode", "prefill"),
    )
    assert [(f.phase, f.path, f.bytes) for f in summary.files] == [
        ("decode", "profiles/decode/n1_decode_w0_profile_gpu0.nsys-rep", 7)
    ]
    assert [m.split(":")[0] for m in summary.missing] == [
        "profiles/prefill/n1_prefill_w0_profile_gpu1.nsys-rep",
        "profiles/prefill/",
    ]
    assert not apply_profiles(tmp_path, summary)  # no rollup yet: only the index
    index = json.loads((tmp_path / "profiles" / "index.json").read_text())
    assert len(index["files"]) == 1 and len(index["missing"]) == 2
    config = {"model": "m", "isl": 8, "osl": 8}
    rollup = {"benchmark_type": "sa-bench", "timestamp": "t", "config": config, "x": 1}
    (tmp_path / "benchmark-rollup.json").write_text(json.dumps(rollup))
    assert apply_profiles(tmp_path, summary)
    merged = json.loads((tmp_path / "benchmark-rollup.json").read_text())
    assert merged["x"] == 1  # fields the structs do not know are kept
    assert merged["profiles"]["files"][0]["bytes"] == 7


def test_the_cli_prints_each_profile_and_exits_0_with_missing_ones(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "srt_bench", "profiles", "--log-dir", str(tmp_path)]
    done = subprocess.run(
        [*argv, "--expect-dir", "agg"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "profile missing: profiles/agg/: no trace" in done.stdout
    assert "0 file(s), 1 missing" in done.stdout
