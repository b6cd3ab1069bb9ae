"""Helpers of the tests that run real local jobs with ``srtctl apply --local`` in the background:
the job's status, the processes of the run (found by a marker every process inherits), waiting
while the apply runs. The ``manual_recipe`` and ``marker`` fixtures (conftest.py) use them."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[3]
SRTCTL = [sys.executable, "-c", "from srt_cli.main import main; main()"]
#: The environment variable every process of a test's run inherits (value: the ``marker``).
MARKER = "SRT_LOCAL_TEST_MARKER"


def job_status(job_dir: Path) -> dict[str, Any]:
    """``status.json`` of a job (empty until the runtime wrote it)."""
    try:
        doc = json.loads((job_dir / "status.json").read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return {}
    assert isinstance(doc, dict)
    return doc


def marked(marker: str) -> list[int]:
    """Live (non-zombie) processes whose environment carries ``MARKER=marker``."""
    from srt_runtime.watchdog import marked_pids

    return marked_pids(marker, variable=MARKER)


def wait_for(check: Any, what: str, timeout: float, child: subprocess.Popen[str]) -> None:
    """Poll ``check`` until true; fail at ``timeout`` or when the apply ``child`` ends first."""
    deadline = time.monotonic() + timeout
    while not check():
        if child.poll() is not None:
            out, _ = child.communicate()
            raise AssertionError(f"srtctl apply ended (exit {child.returncode}) before {what}:\n"
                                 f"{out[-3000:]}")  # fmt: skip
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def write_manual_recipe(folder: Path) -> Path:
    """examples/quickstart.yaml with ``benchmark.type: manual``: it serves until stopped."""
    doc = yaml.safe_load((ROOT / "examples" / "quickstart.yaml").read_text())
    doc["model"]["path"] = str(ROOT / "examples" / "models" / "tiny-word")
    doc["benchmark"] = {"type": "manual"}
    path = folder / "manual.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path
