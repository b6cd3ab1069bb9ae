"""Shared fixtures for srt-cli tests: a clean environment, a scratch cwd, a CliRunner helper."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from srt_cli.main import cli

sys.path.insert(0, str(Path(__file__).resolve().parent))  # cli_testkit, under importlib mode

from cli_testkit import DATA, Invoke
from local_jobs import marked, write_manual_recipe

#: RUN_EVAL / EVAL_ONLY / EVAL_CONC change the plan (the post_eval step); tests set them.
_STRIPPED = (
    "SLURM_",
    "SRTCTL_",
    "AWS_",
    "SRTSLURM_CONFIG",
    "RUNNER_NAME",
    "CUDA_VISIBLE_DEVICES",
    "RUN_EVAL",
    "EVAL_ONLY",
    "EVAL_CONC",
)


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in list(os.environ):
        if key.startswith(_STRIPPED):
            monkeypatch.delenv(key)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A private copy of tests/data (commands may write next to their inputs)."""
    target = tmp_path / "data"
    shutil.copytree(DATA, target)
    return target


@pytest.fixture
def invoke() -> Invoke:
    """``invoke(*args, input=None, env=None)`` -> click Result (stdout and stderr separate)."""

    def run(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> Result:
        runner = CliRunner()
        return runner.invoke(cli, list(args), input=input, env=env, catch_exceptions=False)

    return run


@pytest.fixture
def no_slurm_path(tmp_path: Path) -> dict[str, str]:
    """A PATH with bash (the service needs it) and no sbatch (this machine may have one)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "bash").symlink_to("/bin/bash")
    return {"PATH": str(folder)}


@pytest.fixture
def manual_recipe(tmp_path: Path) -> Path:
    """examples/quickstart.yaml with ``benchmark.type: manual``: it serves until stopped."""
    return write_manual_recipe(tmp_path)


@pytest.fixture
def marker() -> Iterator[str]:
    """Every process of a local run inherits this marker (``local_jobs.MARKER``); none may
    outlive the test."""
    value = uuid.uuid4().hex
    yield value
    for pid in marked(value):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
