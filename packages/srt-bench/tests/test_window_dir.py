"""The measurement-window folder (`--window-dir` / `$SRT_MEASUREMENT_WINDOW_DIR`): created when
missing, or one error line and exit 2 before any request is sent. `srt-bench run` as a process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from srt_bench.testing import FixedStreamServer, ServerBehaviour

ENV = "SRT_MEASUREMENT_WINDOW_DIR"


def _run(config: Path, *args: str, env_dir: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != ENV}
    if env_dir is not None:
        env[ENV] = str(env_dir)
    return subprocess.run(
        [sys.executable, "-m", "srt_bench", "run", "--config", str(config), *args],
        capture_output=True, text=True, timeout=120, check=False, env=env,
    )  # fmt: skip


def _custom(tmp_path: Path) -> Path:
    """A `custom` benchmark that leaves a marker: it ran."""
    config = tmp_path / "bench.json"
    doc = {
        "benchmark": {"type": "custom", "command": "touch ran"},
        "endpoint": "http://127.0.0.1:1",
        "model_name": "m",
        "total_gpus": 1,
        "output_dir": str(tmp_path / "out"),
    }
    config.write_text(json.dumps(doc))
    return config


def _sa_bench(tmp_path: Path, url: str, model: Path) -> Path:
    config = tmp_path / "bench.json"
    doc = {
        "benchmark": {
            "type": "sa-bench", "isl": 20, "osl": 6, "concurrencies": [2],
            "num_prompts_mult": 2, "num_warmup_mult": 0, "random_range_ratio": 1.0,
        },
        "endpoint": url,
        "model_name": "tiny",
        "tokenizer_path": str(model),
        "total_gpus": 4,
        "output_dir": str(tmp_path / "out"),
    }  # fmt: skip
    config.write_text(json.dumps(doc))
    return config


def test_a_missing_window_dir_is_created_with_its_parents(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "windows"
    proc = _run(_custom(tmp_path), "--window-dir", str(target))
    assert proc.returncode == 0, proc.stderr
    assert target.is_dir()
    assert (tmp_path / "out" / "ran").exists()


def test_the_env_folder_is_created_and_sa_bench_writes_its_windows_there(
    tmp_path: Path, tiny_model: Path
) -> None:
    target = tmp_path / "logs" / "power" / "windows"
    behaviour = ServerBehaviour(honour_max_tokens=True, count_prompt_tokens=True)
    with FixedStreamServer(behaviour) as server:
        proc = _run(_sa_bench(tmp_path, server.url, tiny_model), env_dir=target)
    assert proc.returncode == 0, proc.stderr
    window = json.loads((target / "results_concurrency_2_gpus_4.json").read_text())
    assert window["status"] == "completed"
    assert window["concurrency"] == 2


def test_a_file_in_the_way_is_exit_2_before_the_benchmark_starts(tmp_path: Path) -> None:
    blocker = tmp_path / "windows"
    blocker.write_text("not a folder")
    proc = _run(_custom(tmp_path), "--window-dir", str(blocker))
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"srt-bench: error: measurement-window folder {blocker}: cannot be created: a file is in "
        "the way; fix it or point --window-dir / $SRT_MEASUREMENT_WINDOW_DIR elsewhere"
    ]
    assert not (tmp_path / "out" / "ran").exists()


def test_a_file_in_the_way_of_the_env_folder_sends_no_request(
    tmp_path: Path, tiny_model: Path
) -> None:
    (tmp_path / "power").write_text("")
    target = tmp_path / "power" / "windows"
    with FixedStreamServer(ServerBehaviour()) as server:
        proc = _run(_sa_bench(tmp_path, server.url, tiny_model), env_dir=target)
        assert server.requests == 0
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"srt-bench: error: measurement-window folder {target}: cannot be created: a file is in "
        "the way of a parent folder; fix it or point --window-dir / $SRT_MEASUREMENT_WINDOW_DIR "
        "elsewhere"
    ]


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into a read-only folder")
def test_a_folder_without_write_permission_is_exit_2(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        proc = _run(_custom(tmp_path), "--window-dir", str(locked / "windows"))
    finally:
        locked.chmod(0o700)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"srt-bench: error: measurement-window folder {locked / 'windows'}: cannot be created: "
        "Permission denied; fix it or point --window-dir / $SRT_MEASUREMENT_WINDOW_DIR elsewhere"
    ]


def test_the_cause_of_an_os_error_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The message for any other OSError (permission, read-only file system): its strerror."""
    from srt_bench.errors import BenchWindowDirError
    from srt_bench.windows import ensure_window_dir

    def refuse(
        self: Path, mode: int = 0o777, parents: bool = False, exist_ok: bool = False
    ) -> None:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "mkdir", refuse)
    with pytest.raises(BenchWindowDirError) as exc:
        ensure_window_dir(tmp_path / "w")
    assert exc.value.exit_code == 2
    assert str(exc.value) == (
        f"measurement-window folder {tmp_path / 'w'}: cannot be created: Permission denied; "
        "fix it or point --window-dir / $SRT_MEASUREMENT_WINDOW_DIR elsewhere"
    )
