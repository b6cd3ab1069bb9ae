"""Ranges: every count, size, port, length, duration and interval of the schemas has one row in
registry.FIELD_BOUNDS, read by the structural check; engine args that are GPU counts are checked
at validate (issue 14)."""

from __future__ import annotations

from typing import Any

import pytest

from srt_schema import ClusterConfigError, RecipeError, load_recipe_document, parse_cluster_config
from srt_schema.registry import FIELD_BOUNDS, Bound
from srt_schema.schemas import load_schema
from srt_schema.yamlio import dump_yaml

Doc = dict[str, Any]

#: Numeric fields whose rule is not a plain range (cross-field or special values), each checked
#: at validate by the rule named here.
_NOT_A_RANGE = {
    ("BenchmarkConfig", "req_rate"): "benchmark_rules.benchmark_fields: > 0 or inf",
    ("BenchmarkConfig", "top_k"): "-1 means off in SGLang and vLLM",
    ("BenchmarkConfig", "slow_down_sleep_time"): "benchmark_rules.slow_down: both or neither",
    ("BenchmarkConfig", "slow_down_wait_time"): "benchmark_rules.slow_down: both or neither",
}


def _numeric_fields(schema: dict[str, Any]) -> set[tuple[str, str]]:
    def types(node: dict[str, Any]) -> set[str]:
        if "anyOf" in node:
            return set().union(*(types(o) for o in node["anyOf"]))
        return {node["type"]} if "type" in node and "$ref" not in node else set()

    owners = [("$root", schema), *schema.get("$defs", {}).items()]
    return {
        (owner, key)
        for owner, node in owners
        for key, prop in node.get("properties", {}).items()
        if types(prop) & {"integer", "number"}
    }


def test_every_numeric_field_of_both_schemas_has_a_range() -> None:
    fields = _numeric_fields(load_schema("recipe")) | _numeric_fields(load_schema("cluster"))
    missing = sorted(f for f in fields if f not in FIELD_BOUNDS and f not in _NOT_A_RANGE)
    assert missing == []


def test_every_range_names_a_numeric_field() -> None:
    fields = _numeric_fields(load_schema("recipe")) | _numeric_fields(load_schema("cluster"))
    assert sorted(set(FIELD_BOUNDS) - fields) == []


def test_bound_describes_and_allows_its_range() -> None:
    above = Bound(minimum=0, maximum=86_400, kind="a number", above=True)
    assert above.describe() == "a number in (0, 86400]"
    assert (above.allows(0), above.allows(0.001), above.allows(86_400.5)) == (False, True, False)
    assert Bound(minimum=1).describe() == "an integer >= 1"
    assert (
        Bound(minimum=0.5, maximum=1e6, kind="a number").describe() == "a number in [0.5, 1000000]"
    )
    assert not Bound(minimum=0, maximum=1, kind="a number").allows(float("nan"))


def _issues(doc: Doc) -> list[str]:
    with pytest.raises(RecipeError) as err:
        load_recipe_document(doc, file="r.yaml")
    return [i.render() for i in err.value.issues]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d["roles"]["agg"].update(nodes=10**12),
            "r.yaml: $.roles.agg.nodes: 1000000000000 is out of range; nodes must be an integer "
            "in [0, 4096]",
        ),
        (
            lambda d: d["roles"]["agg"].update(workers=2**63),
            "r.yaml: $.roles.agg.workers: 9223372036854775808 is out of range; workers must be "
            "an integer in [0, 262144]",
        ),
        (
            lambda d: d["resources"].update(gpus_per_node=0),
            "r.yaml: $.resources.gpus_per_node: 0 is out of range; gpus_per_node must be an "
            "integer in [1, 64]",
        ),
        (
            lambda d: d["roles"]["agg"].update(gpus=0),
            "r.yaml: $.roles.agg.gpus: 0 is out of range; gpus must be an integer in [1, 262144]",
        ),
        (
            lambda d: d.update(health_check={"interval_seconds": 0}),
            "r.yaml: $.health_check.interval_seconds: 0 is out of range; interval_seconds must be "
            "an integer in [1, 3600]",
        ),
        (
            lambda d: d.update(telemetry={"startup_timeout_seconds": 0.0}),
            "r.yaml: $.telemetry.startup_timeout_seconds: 0.0 is out of range; "
            "startup_timeout_seconds must be a number in (0, 86400]",
        ),
        (
            lambda d: d["roles"]["agg"].update(restart={"max_restarts": 10**6}),
            "r.yaml: $.roles.agg.restart.max_restarts: 1000000 is out of range; max_restarts "
            "must be an integer in [0, 1000]",
        ),
        (
            lambda d: d["benchmark"].update(isl=10**9),
            "r.yaml: $.benchmark.isl: 1000000000 is out of range; isl must be an integer in "
            "[1, 10000000]",
        ),
        (
            lambda d: d.update(
                services=[
                    {"name": "s", "type": "generic", "command": ["x"], "readiness": {"port": 0}}
                ]
            ),
            "r.yaml: $.services[0].readiness.port: 0 is out of range; port must be an integer in "
            "[1, 65535]",
        ),
    ],
)
def test_a_value_outside_its_range_is_refused_with_the_range(
    make_recipe: Any, edit: Any, message: str
) -> None:
    doc = make_recipe()
    edit(doc)
    assert _issues(doc) == [message]


def test_the_range_applies_wherever_its_definition_is_used(make_recipe: Any) -> None:
    doc = make_recipe(engine={"type": "mocker", "num_workers": 0})
    doc["roles"]["agg"]["engine"] = {"type": "mocker", "speedup_ratio": 0}
    assert _issues(doc) == [
        "r.yaml: $.engine.num_workers: 0 is out of range; num_workers must be an integer in "
        "[1, 262144]",
        "r.yaml: $.roles.agg.engine.speedup_ratio: 0 is out of range; speedup_ratio must be a "
        "number in (0, 1000000]",
    ]


def test_the_ends_of_a_range_are_allowed(make_recipe: Any) -> None:
    doc = make_recipe()
    doc["resources"]["gpus_per_node"] = 64
    doc["roles"]["agg"]["gpus"] = 64
    doc["health_check"] = {"interval_seconds": 3600, "max_attempts": 1}
    [job] = load_recipe_document(doc, file="r.yaml")
    assert job.recipe.resources.gpus_per_node == 64


def test_a_sweep_value_outside_the_range_names_its_point(make_recipe: Any) -> None:
    doc = make_recipe(sweep={"n": [1, 5000]})
    doc["roles"]["agg"]["nodes"] = "{n}"
    assert _issues(doc) == [
        "r.yaml [n=5000]: $.roles.agg.nodes: 5000 is out of range; nodes must be an integer in "
        "[0, 4096]"
    ]


def test_cluster_config_gpus_per_node_zero_is_refused() -> None:
    with pytest.raises(ClusterConfigError) as err:
        parse_cluster_config("gpus_per_node: 0\n", file="srtslurm.yaml")
    assert [i.render() for i in err.value.issues] == [
        "srtslurm.yaml: $.gpus_per_node: 0 is out of range; gpus_per_node must be an integer in "
        "[1, 64]"
    ]


def test_cluster_config_refuses_plain_data_violations() -> None:
    with pytest.raises(ClusterConfigError) as err:
        parse_cluster_config("default_account: 2024-01-01\n", file="srtslurm.yaml")
    assert [i.render() for i in err.value.issues] == [
        "srtslurm.yaml: $.default_account: YAML reads 2024-01-01 as a date (line 1); quote it: "
        '"2024-01-01"'
    ]


# -- engine args the planner computes with -----------------------------------------------------
@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        (
            "tensor-parallel-size",
            "four",
            "r.yaml: $.roles.agg.args.tensor-parallel-size: 'four' is not a whole number; "
            "tensor-parallel-size must be an integer in [1, 262144] (a GPU count)",
        ),
        (
            "data_parallel_size",
            1.5,
            "r.yaml: $.roles.agg.args.data_parallel_size: 1.5 is not a whole number; "
            "data_parallel_size must be an integer in [1, 262144] (a GPU count)",
        ),
        (
            "pipeline-parallel-size",
            0,
            "r.yaml: $.roles.agg.args.pipeline-parallel-size: 0 is out of range; "
            "pipeline-parallel-size must be an integer in [1, 262144]",
        ),
        (
            "tp-size",
            True,
            "r.yaml: $.roles.agg.args.tp-size: true is not a whole number; tp-size must be an "
            "integer in [1, 262144] (a GPU count)",
        ),
        (
            "dp",
            "²",
            "r.yaml: $.roles.agg.args.dp: '²' is not a whole number; dp must be an integer in "
            "[1, 262144] (a GPU count)",
        ),
        (
            "tensor-parallel-size",
            2**63,
            "r.yaml: $.roles.agg.args.tensor-parallel-size: 9223372036854775808 is out of range; "
            "tensor-parallel-size must be an integer in [1, 262144]",
        ),
    ],
)
def test_parallel_engine_args_must_be_gpu_counts(
    make_recipe: Any, key: str, value: Any, message: str
) -> None:
    doc = make_recipe(engine="vllm")
    doc["frontend"] = {"type": "dynamo"}
    doc["roles"]["agg"]["args"] = {key: value}
    assert _issues(doc) == [message]


def test_parallel_engine_args_as_numbers_or_digits_load(make_recipe: Any) -> None:
    doc = make_recipe(engine="vllm")
    doc["roles"]["agg"]["args"] = {"tensor-parallel-size": "2", "data-parallel-size": 2}
    [job] = load_recipe_document(doc, file="r.yaml")
    assert job.recipe.roles["agg"].args["tensor-parallel-size"] == "2"


def test_ranges_survive_a_dump_and_reload(make_recipe: Any) -> None:
    from srt_schema import load_recipe_text

    doc = make_recipe()
    doc["roles"]["agg"]["nodes"] = 4097
    with pytest.raises(RecipeError, match=r"4097 is out of range; nodes must be an integer in"):
        load_recipe_text(dump_yaml(doc), file="r.yaml")
