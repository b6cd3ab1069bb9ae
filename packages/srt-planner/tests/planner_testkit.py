"""Test helpers of srt-planner (importable because conftest puts this directory on sys.path).

The one recipe factory lives here so hypothesis tests can call it outside fixtures; conftest
exposes it as the ``make_recipe`` fixture.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import msgspec

from srt_schema.recipe import Recipe

__all__ = ["BASE_RECIPE", "EXPORTERS", "RecipeFactory", "build_recipe"]

#: Services implied by Tachometer on every pyxis job; tests about other services leave them out.
EXPORTERS = frozenset({"dcgm-exporter", "node-exporter", "process-exporter"})

RecipeFactory = Callable[..., Recipe]

BASE_RECIPE: dict[str, Any] = {
    "schema": 2,
    "name": "test-job",
    "model": {"path": "/models/qwen3", "container": "dynamo-sglang.sqsh", "precision": "bf16"},
    "resources": {"gpu_type": "h100", "gpus_per_node": 8},
    "engine": "sglang",
    "roles": {"agg": {"nodes": 1, "workers": 1}},
}


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict) and key != "roles":
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def build_recipe(**fields: Any) -> Recipe:
    """A schema-2 recipe: BASE_RECIPE with ``fields`` merged in (``roles`` replaces wholesale)."""
    return msgspec.convert(_merge(BASE_RECIPE, fields), Recipe)
