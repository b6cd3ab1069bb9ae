"""Recipes srtctl validate used to accept although the job could not do what they ask: engine args
srt sets itself, and a Mooncake master no worker transfers through
(docs/recipes.md#engine-args-rules, docs/recipes.md#services-rules). One exact-message test per
rule, and the accepted neighbours."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from srt_schema import RecipeError, load_recipe_document

Doc = dict[str, Any]

_BASE: Doc = {
    "schema": 2,
    "name": "unit",
    "model": {"path": "/m", "container": "img:1", "precision": "bf16"},
    "resources": {"gpus_per_node": 4},
    "engine": "vllm",
    "roles": {"agg": {"nodes": 1, "workers": 1}},
    "frontend": {"type": "dynamo"},
    "benchmark": {"type": "sa-bench", "isl": 8, "osl": 8, "concurrencies": [1]},
}


def _doc(**changes: Any) -> Doc:
    doc = copy.deepcopy(_BASE)
    doc.update(changes)
    return doc


def _disagg(engine: Any, prefill_args: Doc, decode_args: Doc | None = None) -> Doc:
    roles = {
        "prefill": {"nodes": 1, "workers": 1, "gpus": 2, "args": prefill_args},
        "decode": {"nodes": 1, "workers": 1, "gpus": 2, "args": decode_args or {}},
    }
    services = [{"name": "mooncake-master", "type": "mooncake-master"}]
    return _doc(engine=engine, roles=roles, services=services)


def _issues(doc: Doc) -> list[tuple[str, str]]:
    try:
        load_recipe_document(doc, file="r.yaml")
    except RecipeError as exc:
        return [(i.path, i.message) for i in exc.issues]
    return []


# ----------------------------------------------------------------------------- mooncake


def test_a_mooncake_master_with_sglang_workers_that_transfer_otherwise_is_refused() -> None:
    doc = _disagg("sglang", {"disaggregation-transfer-backend": "nixl"})
    assert _issues(doc) == [
        (
            "$.services[0]",
            "a mooncake-master service ('mooncake-master', the v1 backend.mooncake_kv_store) "
            "serves Mooncake KV transfers, but no prefill or decode role sets "
            "disaggregation-transfer-backend: mooncake; set disaggregation-transfer-backend: "
            "mooncake in roles.prefill.args and roles.decode.args, or remove the "
            "mooncake-master service",
        )
    ]


def test_a_mooncake_master_with_the_default_vllm_connector_is_refused() -> None:
    (issue,) = _issues(_disagg("vllm", {}))
    assert issue[0] == "$.services[0]"
    assert "no prefill or decode role's KV connector is a Mooncake one" in issue[1]


@pytest.mark.parametrize(
    ("engine", "args"),
    [
        ("sglang", {"disaggregation-transfer-backend": "mooncake"}),
        ("sglang", {"disaggregation_transfer_backend": "mooncake"}),
        ("vllm", {"connector": '{"kv_connector": "MooncakeConnector", "kv_role": "kv_both"}'}),
        ({"type": "vllm", "connector": '{"kv_connector": "MooncakeConnector"}'}, {}),
    ],
)
def test_a_mooncake_master_with_mooncake_transfers_loads(engine: Any, args: Doc) -> None:
    assert _issues(_disagg(engine, args)) == []


def test_an_aggregated_recipe_may_run_a_mooncake_master() -> None:
    doc = _doc(services=[{"name": "mooncake-master", "type": "mooncake-master"}])
    assert _issues(doc) == []


# ----------------------------------------------------------------------------- vLLM headless


def test_headless_by_hand_under_per_node_data_parallel_is_refused() -> None:
    roles = {"agg": {"nodes": 2, "workers": 1, "args": {"data-parallel-size": 8, "headless": True}}}
    assert _issues(_doc(roles=roles)) == [
        (
            "$.roles.agg.args.headless",
            "headless: True is set by hand, but under per-node data parallelism every node of "
            "the worker serves its own API (srt passes --data-parallel-hybrid-lb), so no process "
            "may be headless; remove roles.agg.args.headless",
        )
    ]


def test_headless_by_hand_on_a_plain_vllm_worker_is_refused() -> None:
    roles = {"agg": {"nodes": 1, "workers": 1, "args": {"headless": True}}}
    (issue,) = _issues(_doc(roles=roles))
    assert issue[0] == "$.roles.agg.args.headless"
    assert "srt passes --headless itself, to the follower nodes" in issue[1]


def test_headless_false_and_other_engines_are_left_alone() -> None:
    roles = {"agg": {"nodes": 1, "workers": 1, "args": {"headless": False}}}
    assert _issues(_doc(roles=roles)) == []
    roles = {"agg": {"nodes": 1, "workers": 1, "args": {"headless": True}}}
    assert _issues(_doc(engine="sglang", roles=roles)) == []


# ----------------------------------------------------------------------------- profiler-config


def test_a_vllm_profiler_config_by_hand_with_nsys_profiling_is_refused() -> None:
    roles = {"agg": {"nodes": 1, "workers": 1, "args": {"profiler-config.delay_iterations": 5}}}
    profiling = {"type": "nsys", "aggregated": {"start_step": 10, "stop_step": 20}}
    assert _issues(_doc(roles=roles, profiling=profiling)) == [
        (
            '$.roles.agg.args["profiler-config.delay_iterations"]',
            "profiler-config.delay_iterations is set by hand, but profiling.type nsys drives "
            "vLLM's profiler itself (the window is the profiling block's start_step and "
            "stop_step); remove roles.agg.args.profiler-config.delay_iterations, or drop "
            "profiling and profile by hand",
        )
    ]


def test_a_vllm_profiler_config_without_nsys_loads() -> None:
    roles = {"agg": {"nodes": 1, "workers": 1, "args": {"profiler-config": '{"profiler": "x"}'}}}
    assert _issues(_doc(roles=roles)) == []
