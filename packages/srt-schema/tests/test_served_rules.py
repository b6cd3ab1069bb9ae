"""The served model name: decided once (srt_schema.served), roles may not disagree."""

from __future__ import annotations

from typing import Any

import pytest

from srt_schema import RecipeError, load_recipe_document
from srt_schema.served import default_served_name, served_model_name


def _doc(**fields: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "schema": 2,
        "name": "unit",
        "model": {"path": "/models/Qwen3-0.6B", "container": "img:1", "precision": "bf16"},
        "resources": {"gpus_per_node": 4},
        "engine": "sglang",
        "roles": {
            "prefill": {"nodes": 1, "workers": 1, "gpus": 2},
            "decode": {"nodes": 1, "workers": 1, "gpus": 2},
        },
        "benchmark": {"type": "sa-bench", "isl": 8, "osl": 8, "concurrencies": [1]},
    }
    doc.update(fields)
    return doc


def _name(doc: dict[str, Any]) -> str:
    (job,) = load_recipe_document(doc, file="r.yaml")
    return served_model_name(job.recipe)


@pytest.mark.parametrize(
    ("path", "name"),
    [("/models/Qwen3-0.6B/", "Qwen3-0.6B"), ("hf:Qwen/Qwen3-0.6B", "Qwen3-0.6B"), ("m", "m")],
)
def test_the_default_is_the_model_paths_last_component(path: str, name: str) -> None:
    assert default_served_name(path) == name


def test_a_name_on_one_role_names_the_whole_deployment() -> None:
    doc = _doc()
    doc["roles"]["decode"]["args"] = {"served-model-name": "Org/x"}
    assert _name(doc) == "Org/x"


def test_each_engine_reads_its_own_flag() -> None:
    mocker = _doc(engine="mocker")
    mocker["roles"]["prefill"]["args"] = {"model-name": "Org/m"}
    assert _name(mocker) == "Org/m"
    trtllm = _doc(engine={"type": "trtllm", "served_model_name": "Org/t"})
    trtllm["roles"]["prefill"]["args"] = {"served_model_name": "ignored: engine YAML key"}
    assert _name(trtllm) == "Org/t"
    vllm = _doc(engine="vllm")
    vllm["roles"]["decode"]["args"] = {"served-model-name": ["first", "second"]}
    assert _name(vllm) == "first"


def test_roles_that_disagree_are_refused() -> None:
    doc = _doc()
    doc["roles"]["prefill"]["args"] = {"served-model-name": "a"}
    doc["roles"]["decode"]["args"] = {"served_model_name": "b"}
    with pytest.raises(RecipeError) as caught:
        load_recipe_document(doc, file="r.yaml")
    assert [(i.path, i.message) for i in caught.value.issues] == [
        (
            "$.roles.decode.args.served_model_name",
            "decode serves 'b' but prefill serves 'a' ($.roles.prefill.args.served-model-name); "
            "a deployment serves one model name that every worker registers and every client "
            "asks for: give every role the same name, or name it on one role only",
        )
    ]


def test_roles_that_agree_are_fine() -> None:
    doc = _doc()
    doc["roles"]["prefill"]["args"] = {"served-model-name": "a"}
    doc["roles"]["decode"]["args"] = {"served-model-name": "a"}
    assert _name(doc) == "a"
