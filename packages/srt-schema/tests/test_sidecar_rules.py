"""The Dynamo sidecar mode's validate refusals for TRT-LLM and the context length, by exact
message (srt_schema.validate.unsupported_rules); the layouts srt plans load."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from srt_schema import RecipeError, load_recipe_document
from srt_schema.overrides import deep_merge

_BASE: dict[str, Any] = {
    "schema": 2,
    "name": "unit",
    "model": {"path": "/models/tiny", "container": "img", "precision": "bf16"},
    "resources": {"gpus_per_node": 4},
    "engine": {"type": "trtllm"},
    "roles": {"agg": {"nodes": 1, "workers": 1, "sidecar": True}},
    "frontend": {"type": "dynamo"},
    "benchmark": {"type": "sa-bench", "isl": 8, "osl": 8, "concurrencies": [1]},
}
_DISAGG = {
    "prefill": {"nodes": 1, "workers": 1, "sidecar": True},
    "decode": {"nodes": 1, "workers": 1, "sidecar": True},
}
_CONTEXT = (
    "sidecar_context_length is passed only to the TRT-LLM sidecar (--context-length); the sglang "
    "and vllm sidecars read the context length from their engine and without the sidecar mode "
    "nothing reads it; remove sidecar_context_length, or use it with engine trtllm and "
    "roles.agg.sidecar: true"
)
_TRTLLM_DISAGG = (
    "the TRT-LLM Dynamo sidecar mode runs aggregated workers only (a disaggregated native gRPC "
    "server + sidecar is not laid out by srt); use roles.agg with sidecar: true, or remove "
    "sidecar: true to run dynamo.trtllm disaggregated"
)
_PUBLISH = (
    "the TRT-LLM sidecar mode runs the native gRPC server, which takes no publish flags (they "
    "are dynamo.trtllm flags); remove publish_metrics and publish_events_and_metrics, or remove "
    "sidecar: true"
)


def _issues(fragment: dict[str, Any]) -> list[tuple[str, str]]:
    doc = copy.deepcopy(_BASE)
    if "roles" in fragment:
        doc["roles"] = fragment.pop("roles")
    try:
        load_recipe_document(deep_merge(doc, fragment), file="r.yaml")
    except RecipeError as exc:
        return [(i.path, i.message) for i in exc.issues]
    return []


@pytest.mark.parametrize(
    "fragment",
    [
        {"dynamo": {"sidecar_context_length": 8192}},
        {"dynamo": {"sidecar_context_length": 8192, "sidecar_port": 52000}},
        {"engine": {"type": "vllm"}},
        {"engine": {"type": "vllm"}, "roles": _DISAGG},
    ],
)
def test_planned_sidecar_layouts_load(fragment: dict[str, Any]) -> None:
    assert _issues(copy.deepcopy(fragment)) == []


@pytest.mark.parametrize(
    ("fragment", "expected"),
    [
        (
            {"engine": {"type": "vllm"}, "dynamo": {"sidecar_context_length": 8192}},
            [("$.dynamo.sidecar_context_length", _CONTEXT)],
        ),
        (
            {"engine": {"type": "sglang"}, "dynamo": {"sidecar_context_length": 8192}},
            [("$.dynamo.sidecar_context_length", _CONTEXT)],
        ),
        (
            {
                "roles": {"agg": {"nodes": 1, "workers": 1}},
                "dynamo": {"sidecar_context_length": 8192},
            },
            [("$.dynamo.sidecar_context_length", _CONTEXT)],
        ),
        (
            {"roles": _DISAGG},
            [
                ("$.roles.prefill.sidecar", _TRTLLM_DISAGG),
                ("$.roles.decode.sidecar", _TRTLLM_DISAGG),
            ],
        ),
        (
            {
                "roles": {k: {"nodes": 1, "workers": 1} for k in _DISAGG},
                "dynamo": {"sidecar": True},
            },
            [("$.dynamo.sidecar", _TRTLLM_DISAGG), ("$.dynamo.sidecar", _TRTLLM_DISAGG)],
        ),
        (
            {"engine": {"type": "trtllm", "publish_metrics": False}},
            [("$.engine.publish_metrics", _PUBLISH)],
        ),
        (
            {"engine": {"type": "trtllm", "publish_events_and_metrics": True}},
            [("$.engine.publish_events_and_metrics", _PUBLISH)],
        ),
    ],
)
def test_sidecar_settings_srt_would_not_run_are_refused(
    fragment: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    assert _issues(copy.deepcopy(fragment)) == expected
