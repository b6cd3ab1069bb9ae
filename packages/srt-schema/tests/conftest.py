"""Shared fixtures for srt-schema's tests: the public corpus and one recipe factory."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest
from schema_corpus import corpus_index, corpus_present, corpus_root, or_absent

BASE_RECIPE: dict[str, Any] = {
    "schema": 2,
    "name": "unit",
    "model": {"path": "/models/tiny", "container": "nvcr.io#nvidia/sglang:1", "precision": "bf16"},
    "resources": {"gpus_per_node": 4},
    "engine": "sglang",
    "roles": {"agg": {"nodes": 1, "workers": 1}},
    "frontend": {"type": "dynamo"},
    "benchmark": {"type": "sa-bench", "isl": 128, "osl": 128, "concurrencies": [1, 2]},
}


def _make_recipe(**changes: Any) -> dict[str, Any]:
    doc = copy.deepcopy(BASE_RECIPE)
    for key, value in changes.items():
        if value is None:
            doc.pop(key, None)
        else:
            doc[key] = value
    return doc


@pytest.fixture
def make_recipe() -> Any:
    """``make_recipe(**changes)``: a valid raw recipe, top-level keys replaced (None removes)."""
    return _make_recipe


@pytest.fixture(name="corpus")
def _corpus() -> Path:
    if not corpus_present():  # only when run alone (the root conftest skips corpus tests first)
        pytest.skip(f"recipe corpus not found at {corpus_root()}; set SRT_CORPUS")
    return corpus_root()


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Installed alone (``.ci/test-alone.sh``) the root conftest, which runs the corpus tier, is not
    loaded: the same rule then, a corpus test without the corpus skips (fails when required)."""
    if os.environ.get("SRT_ALONE") != "1" or item.get_closest_marker("corpus") is None:
        return
    if not corpus_present():
        msg = f"corpus tier: no recipe corpus at {corpus_root()} (set SRT_CORPUS)"
        if os.environ.get("SRT_REQUIRE_CORPUS") == "1":
            pytest.fail(msg)
        pytest.skip(msg)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``v2_entry`` / ``v1_entry`` over the corpus INDEX rows."""
    for name, layout in (("v2_entry", "v2"), ("v1_entry", "v1")):
        if name in metafunc.fixturenames:
            rows = [r for r in corpus_index() if r["layout"] == layout]
            metafunc.parametrize(name, or_absent([pytest.param(r, id=r["rel"]) for r in rows]))


@pytest.fixture(autouse=True)
def _no_ambient_config(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never see the developer's cluster config or Slurm environment."""
    for key in list(os.environ):
        if key.startswith(("SLURM_", "SRTCTL_", "AWS_")) or key in (
            "SRTSLURM_CONFIG",
            "CUDA_VISIBLE_DEVICES",
        ):
            monkeypatch.delenv(key)
