"""Shared fixtures for srt-planner tests: the recipe factory (``--update-golden`` is registered in
the repository's root conftest)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from srt_schema.cluster import ClusterConfig

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # so `planner_testkit` imports in --import-mode=importlib

from planner_testkit import RecipeFactory, build_recipe  # noqa: E402


@pytest.fixture
def make_recipe() -> RecipeFactory:
    return build_recipe


@pytest.fixture
def cluster() -> ClusterConfig:
    return ClusterConfig(default_account="acct", default_partition="batch")


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in list(os.environ):
        if key.startswith(("SLURM_", "SRTCTL_", "AWS_")) or key in {
            "CUDA_VISIBLE_DEVICES",
            "RUNNER_NAME",
        }:
            monkeypatch.delenv(key, raising=False)
