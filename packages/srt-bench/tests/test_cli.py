"""The `srt-bench` command as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from srt_bench.runners import registered_types


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "srt_bench", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=cwd,
    )


def _write(path: Path, benchmark: dict[str, object]) -> Path:
    path.write_text(
        json.dumps(
            {
                "benchmark": benchmark,
                "endpoint": "http://127.0.0.1:1",
                "model_name": "m",
                "total_gpus": 1,
            }
        )
    )
    return path


def test_types_lists_the_registry() -> None:
    proc = _cli("types")
    assert proc.returncode == 0
    assert proc.stdout.split() == list(registered_types())


def test_custom_exit_code_and_env_pass_through(tmp_path: Path) -> None:
    config = _write(
        tmp_path / "bench.json",
        {"type": "custom", "command": 'echo "run $X in $PWD"; exit 3', "env": {"X": "x1"}},
    )
    out = tmp_path / "out"
    proc = _cli("run", "--config", str(config), "--out", str(out))
    assert proc.returncode == 3
    assert f"run x1 in {out}" in proc.stdout
    assert "[srt-bench] custom: bash exited with 3" in proc.stdout


def test_bad_config_exits_2_with_the_path(tmp_path: Path) -> None:
    config = _write(tmp_path / "bench.json", {"type": "sa-bench", "isl": "big"})
    proc = _cli("run", "--config", str(config))
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"srt-bench: error: {config}: Expected `int | null`, got `str` - at `$.benchmark.isl`"
    )


def test_rollup_without_results(tmp_path: Path) -> None:
    config = _write(tmp_path / "bench.json", {"type": "sa-bench"})
    proc = _cli("rollup", "--config", str(config), "--out", str(tmp_path))
    assert proc.returncode == 0
    assert "rollup: no sa-bench results found" in proc.stdout


def test_manual_serves_until_sigterm_then_exits_0(tmp_path: Path) -> None:
    import signal
    import time

    config = _write(tmp_path / "bench.json", {"type": "manual"})
    proc = subprocess.Popen(
        [sys.executable, "-m", "srt_bench", "run", "--config", str(config), "--out", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # the start banner: the signal handlers are installed by then
    assert "benchmark type 'manual'" in line
    time.sleep(0.2)
    assert proc.poll() is None
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 0
    assert "manual: stop requested" in out
