"""The installed ``srtctl`` console script, run as a real subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from cli_testkit import DATA, FAKES

SRTCTL = shutil.which("srtctl", path=str(Path(sys.executable).parent)) or "srtctl"


def _run(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    base = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": os.environ.get("HOME", "/root"),
    }
    env = {**base, **(env or {})}
    return subprocess.run(
        [SRTCTL, *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def test_version_and_help(tmp_path: Path) -> None:
    version = _run("--version", cwd=tmp_path)
    assert version.returncode == 0
    assert version.stdout.startswith("srtctl ")
    assert _run("dry-run", "--help", cwd=tmp_path).returncode == 0


def test_dry_run_and_invalid(tmp_path: Path) -> None:
    ok = _run("dry-run", "-f", str(DATA / "mocker-agg.yaml"), cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert "#SBATCH --job-name=mocker-agg" in ok.stdout
    bad = _run("validate", "-f", str(DATA / "v1-agg.yaml"), cwd=tmp_path)
    assert bad.returncode == 2
    assert "srtctl migrate" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_apply_with_fake_sbatch(tmp_path: Path) -> None:
    env = {
        "PATH": f"{FAKES}:{Path(sys.executable).parent}:/usr/bin:/bin",
        "FAKE_SBATCH_DIR": str(tmp_path / "sbatch"),
    }
    args = ("apply", "-f", str(DATA / "mocker-agg.yaml"), "--no-preflight", "--json")
    done = _run(*args, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["status"] == "submitted"
    assert Path(record["metadata_path"]).is_file()
