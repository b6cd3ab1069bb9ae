"""Service options the planner computes with are checked at validate (not a planner traceback)."""

from __future__ import annotations

from typing import Any

import pytest

from srt_schema import RecipeError, load_recipe_document


def _doc(options: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema": 2,
        "name": "unit",
        "model": {"path": "/m", "container": "img:1", "precision": "bf16"},
        "resources": {"gpus_per_node": 4},
        "engine": "sglang",
        "roles": {"agg": {"nodes": 1, "workers": 1}},
        "services": [{"name": "nats", "type": "nats", "options": options}],
    }


@pytest.mark.parametrize("value", ["{job_id}", "8", 0, 4096, 1.5, True])
def test_nats_max_payload_must_be_whole_mib(value: object) -> None:
    with pytest.raises(RecipeError) as caught:
        load_recipe_document(_doc({"max_payload_mb": value}), file="r.yaml")
    assert [(i.path, i.message) for i in caught.value.issues] == [
        (
            "$.services[0].options.max_payload_mb",
            f"max_payload_mb must be a whole number of MiB from 1 to 1024, got {value!r}",
        )
    ]


def test_a_sane_payload_loads() -> None:
    (job,) = load_recipe_document(_doc({"max_payload_mb": 8}), file="r.yaml")
    assert job.recipe.services[0].options == {"max_payload_mb": 8}
