"""`benchmark.capacity` and `benchmark.workload` (extensions of this project,
docs/schema-extensions.md): they load, they decode to their structs, and every cross-field rule
(validate/capacity_rules.py, the sa-bench rule in benchmark_rules.py) refuses by exact message."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from srt_schema import RecipeError, load_recipe_document
from srt_schema.recipe import (
    CapacitySearchConfig,
    CapacityTargets,
    MultiTurnWorkload,
    SharedPrefixWorkload,
    TraceReplayWorkload,
)

Doc = dict[str, Any]
BASE: Doc = {
    "schema": 2,
    "name": "unit",
    "model": {"path": "/m", "container": "img:1", "precision": "bf16"},
    "resources": {"gpus_per_node": 4},
    "engine": "sglang",
    "roles": {"agg": {"nodes": 1, "workers": 1}},
    "frontend": {"type": "dynamo"},
    "benchmark": {"type": "sa-bench", "isl": 8, "osl": 8},
}


def _doc(**bench: Any) -> Doc:
    doc = copy.deepcopy(BASE)
    for key, value in bench.items():
        if value is None:
            doc["benchmark"].pop(key, None)
        else:
            doc["benchmark"][key] = value
    return doc


def _issues(doc: Doc) -> list[tuple[str, str]]:
    try:
        load_recipe_document(doc, file="r.yaml")
    except RecipeError as exc:
        return [(i.path, i.message) for i in exc.issues]
    return []


def test_a_capacity_search_loads_with_its_defaults() -> None:
    [job] = load_recipe_document(
        _doc(capacity={"targets": {"ttft_p99_ms": 500, "itl_p99_ms": 25}}), file="r.yaml"
    )
    assert job.recipe.benchmark.capacity == CapacitySearchConfig(
        targets=CapacityTargets(ttft_p99_ms=500.0, itl_p99_ms=25.0),
        min_concurrency=1,
        max_concurrency=1024,
        max_points=10,
        tolerance=0.05,
        max_step=8.0,
    )
    assert job.recipe.benchmark.concurrencies is None


@pytest.mark.parametrize(
    ("workload", "bench", "expected"),
    [
        (
            {"type": "multi-turn", "turns": 3, "think_time_s": 0.5},
            {},
            MultiTurnWorkload(turns=3, think_time_s=0.5),
        ),
        (
            {"type": "shared-prefix", "groups": 4, "prefix_tokens": 512, "suffix_tokens": 64},
            {"isl": None},
            SharedPrefixWorkload(groups=4, prefix_tokens=512, suffix_tokens=64),
        ),
        (
            {"type": "trace-replay", "path": "/data/trace.jsonl", "speedup": 2},
            {"isl": None, "osl": None},
            TraceReplayWorkload(path="/data/trace.jsonl", speedup=2.0),
        ),
    ],
)
def test_each_workload_loads_as_its_tagged_struct(
    workload: Doc, bench: Doc, expected: object
) -> None:
    [job] = load_recipe_document(_doc(workload=workload, concurrencies=[4], **bench), file="r.yaml")
    assert job.recipe.benchmark.workload == expected


@pytest.mark.parametrize(
    ("bench", "issues"),
    [
        (
            {"capacity": {"targets": {}}},
            [
                (
                    "$.benchmark.capacity.targets",
                    "a capacity search needs at least one latency target; set e.g. "
                    "ttft_p99_ms: 500 (any of ttft, tpot, itl, e2el at p50, p90 or p99, in "
                    "milliseconds)",
                )
            ],
        ),
        (
            {
                "capacity": {
                    "targets": {"e2el_p90_ms": 9},
                    "min_concurrency": 64,
                    "max_concurrency": 32,
                }
            },
            [
                (
                    "$.benchmark.capacity.min_concurrency",
                    "min_concurrency 64 is above max_concurrency 32; set min_concurrency <= "
                    "max_concurrency",
                )
            ],
        ),
        (
            {"capacity": {"targets": {"ttft_p99_ms": 500}}, "concurrencies": [4, 8]},
            [
                (
                    "$.benchmark.concurrencies",
                    "benchmark.capacity chooses the concurrencies it measures itself; drop "
                    "benchmark.concurrencies (or drop benchmark.capacity to run the fixed list)",
                )
            ],
        ),
        (
            {"capacity": {"targets": {"ttft_p99_ms": 0}}},
            [
                (
                    "$.benchmark.capacity.targets.ttft_p99_ms",
                    "0 is out of range; ttft_p99_ms must be a number in (0, 3600000]",
                )
            ],
        ),
        (
            {"capacity": {"targets": {"ttft_p99_ms": 9}, "tolerance": 0, "max_points": 1}},
            [
                (
                    "$.benchmark.capacity.tolerance",
                    "0 is out of range; tolerance must be a number in (0, 1]",
                ),
                (
                    "$.benchmark.capacity.max_points",
                    "1 is out of range; max_points must be an integer in [2, 100]",
                ),
            ],
        ),
        (
            {"capacity": {"targets": {"ttft_p98_ms": 9}}},
            [
                (
                    "$.benchmark.capacity.targets.ttft_p98_ms",
                    "unknown key `ttft_p98_ms`; did you mean `ttft_p99_ms`? allowed here: "
                    "ttft_p50_ms, ttft_p90_ms, ttft_p99_ms, tpot_p50_ms, tpot_p90_ms, "
                    "tpot_p99_ms, itl_p50_ms, itl_p90_ms, itl_p99_ms, e2el_p50_ms, e2el_p90_ms, "
                    "e2el_p99_ms",
                )
            ],
        ),
        (
            {"workload": {"type": "multi-turn", "turns": 2}, "osl": None, "concurrencies": [1]},
            [
                (
                    "$.benchmark.osl",
                    "a multi-turn workload needs isl (tokens of each new user text) and osl "
                    "(tokens of each answer); set both, e.g. isl: 128, osl: 64",
                )
            ],
        ),
        (
            {
                "workload": {
                    "type": "shared-prefix",
                    "groups": 1,
                    "prefix_tokens": 8,
                    "suffix_tokens": 8,
                },
                "concurrencies": [1],
            },
            [
                (
                    "$.benchmark.isl",
                    "a shared-prefix workload's prompt is prefix_tokens + suffix_tokens; drop "
                    "benchmark.isl",
                )
            ],
        ),
        (
            {
                "workload": {
                    "type": "shared-prefix",
                    "groups": 1,
                    "prefix_tokens": 8,
                    "suffix_tokens": 8,
                },
                "isl": None,
                "osl": None,
                "concurrencies": [1],
            },
            [
                (
                    "$.benchmark.osl",
                    "a shared-prefix workload needs osl (tokens of each answer); set e.g. "
                    "osl: 64 (the prompt is prefix_tokens + suffix_tokens)",
                )
            ],
        ),
        (
            {"workload": {"type": "trace-replay", "path": "/t.jsonl"}, "concurrencies": [1]},
            [
                (
                    "$.benchmark.isl",
                    "a trace-replay workload takes every length from its trace; drop benchmark.isl",
                ),
                (
                    "$.benchmark.osl",
                    "a trace-replay workload takes every length from its trace; drop benchmark.osl",
                ),
            ],
        ),
        (
            {
                "workload": {"type": "multi-turn", "turns": 2},
                "dataset_name": "custom",
                "dataset_path": "/p.jsonl",
                "concurrencies": [1],
            },
            [
                (
                    "$.benchmark.dataset_name",
                    "a multi-turn workload builds its own prompts; drop dataset_name: custom "
                    "(and dataset_path) or drop benchmark.workload",
                )
            ],
        ),
        (
            {"workload": {"type": "multi-turns", "turns": 2}, "concurrencies": [1]},
            [
                (
                    "$.benchmark.workload.type",
                    "'multi-turns' is not allowed; expected one of 'multi-turn', "
                    "'shared-prefix', 'trace-replay'; did you mean 'multi-turn'?",
                )
            ],
        ),
        (
            {"workload": {"type": "multi-turn", "turns": 0}, "concurrencies": [1]},
            [
                (
                    "$.benchmark.workload.turns",
                    "0 is out of range; turns must be an integer in [1, 10000]",
                )
            ],
        ),
    ],
)
def test_a_bad_capacity_or_workload_is_refused_by_exact_message(
    bench: Doc, issues: list[tuple[str, str]]
) -> None:
    assert _issues(_doc(**bench)) == issues


@pytest.mark.parametrize(
    "field",
    [
        {"capacity": {"targets": {"ttft_p99_ms": 500}}},
        {"workload": {"type": "multi-turn", "turns": 2}},
    ],
)
def test_only_sa_bench_reads_capacity_and_workload(field: Doc) -> None:
    doc = _doc(**field)
    doc["benchmark"]["type"] = "sglang-bench"
    doc["benchmark"]["concurrencies"] = [1]
    [(path, message)] = _issues(doc)
    (name,) = field
    assert path == f"$.benchmark.{name}"
    assert message.startswith(f"benchmark.type 'sglang-bench' does not use {name}; fields it ")


def test_sa_bench_without_concurrencies_or_capacity_is_refused() -> None:
    assert _issues(_doc()) == [
        (
            "$.benchmark.concurrencies",
            "benchmark.type 'sa-bench' needs concurrencies; e.g. isl: 1024, osl: 1024, "
            "concurrencies: [4, 8]",
        )
    ]


def test_a_request_rate_search_loads_with_its_defaults() -> None:
    capacity = {"targets": {"ttft_p99_ms": 500}, "axis": "request_rate", "max_request_rate": 64}
    [job] = load_recipe_document(_doc(capacity=capacity), file="r.yaml")
    search = job.recipe.benchmark.capacity
    assert search is not None and search.axis == "request_rate"
    assert (search.max_request_rate, search.min_request_rate, search.request_rate_step) == (
        64.0,
        None,
        None,
    )
    assert search.seconds_per_point is None
    # the default axis is concurrency and every rate field unset
    [plain] = load_recipe_document(_doc(capacity={"targets": {"ttft_p99_ms": 500}}), file="r.yaml")
    assert plain.recipe.benchmark.capacity is not None
    assert plain.recipe.benchmark.capacity.axis == "concurrency"


RATE: Doc = {"targets": {"ttft_p99_ms": 500}, "axis": "request_rate", "max_request_rate": 64}


@pytest.mark.parametrize(
    ("capacity", "bench", "issues"),
    [
        (
            {"targets": {"ttft_p99_ms": 500}, "max_request_rate": 4, "seconds_per_point": 8},
            {},
            [
                (
                    "$.benchmark.capacity.max_request_rate",
                    "max_request_rate 4 applies to axis request_rate only; set axis: "
                    "request_rate or drop max_request_rate",
                ),
                (
                    "$.benchmark.capacity.seconds_per_point",
                    "seconds_per_point 8 applies to axis request_rate only; set axis: "
                    "request_rate or drop seconds_per_point",
                ),
            ],
        ),
        (
            {"targets": {"ttft_p99_ms": 500}, "axis": "request_rate"},
            {},
            [
                (
                    "$.benchmark.capacity.max_request_rate",
                    "axis request_rate needs max_request_rate (the highest rate measured, in "
                    "requests/s); set e.g. max_request_rate: 64",
                )
            ],
        ),
        (
            {**RATE, "min_request_rate": 80},
            {},
            [
                (
                    "$.benchmark.capacity.min_request_rate",
                    "min_request_rate 80 is above max_request_rate 64; set min_request_rate <= "
                    "max_request_rate",
                )
            ],
        ),
        (
            {**RATE, "max_request_rate": 4, "request_rate_step": 10},
            {},
            [
                (
                    "$.benchmark.capacity.request_rate_step",
                    "no multiple of request_rate_step 10 lies in [1, 4] requests/s; set a "
                    "smaller request_rate_step or a wider range",
                )
            ],
        ),
        (
            {**RATE, "max_concurrency": 8},
            {"req_rate": 5},
            [
                (
                    "$.benchmark.capacity.max_concurrency",
                    "max_concurrency 8 applies to axis concurrency only; drop max_concurrency "
                    "(a rate point lets every request in as it arrives)",
                ),
                (
                    "$.benchmark.req_rate",
                    "axis request_rate chooses each point's request rate itself; drop "
                    "benchmark.req_rate (5)",
                ),
            ],
        ),
        (
            RATE,
            {"workload": {"type": "multi-turn", "turns": 2}},
            [
                (
                    "$.benchmark.workload",
                    "a capacity search on axis request_rate sends independent prompts only; "
                    "drop benchmark.workload or set axis: concurrency",
                )
            ],
        ),
        (
            RATE,
            {"num_prompts_mult": 8},
            [
                (
                    "$.benchmark.num_prompts_mult",
                    "num_prompts_mult 8 sizes concurrency points only; a point of axis "
                    "request_rate measures ceil(rate x seconds_per_point) requests: drop "
                    "num_prompts_mult and set capacity.seconds_per_point",
                )
            ],
        ),
        (
            {**RATE, "axis": "rate"},
            {},
            [
                (
                    "$.benchmark.capacity.axis",
                    "'rate' is not allowed; expected one of 'concurrency', 'request_rate'",
                )
            ],
        ),
        (
            {**RATE, "seconds_per_point": 0},
            {},
            [
                (
                    "$.benchmark.capacity.seconds_per_point",
                    "0 is out of range; seconds_per_point must be a number in (0, 86400]",
                ),
            ],
        ),
        (
            {**RATE, "request_rate_step": 0.05, "seconds_per_point": 10},
            {},
            [
                (
                    "$.benchmark.capacity.seconds_per_point",
                    "request_rate_step 0.05 x seconds_per_point 10 is below 1: two rates of the "
                    "grid could send the same number of requests, by which their runs are told "
                    "apart; set seconds_per_point to at least 20",
                ),
            ],
        ),
    ],
)
def test_a_bad_rate_axis_is_refused_by_exact_message(
    capacity: Doc, bench: Doc, issues: list[tuple[str, str]]
) -> None:
    assert _issues(_doc(capacity=capacity, **bench)) == issues


def test_req_rate_inf_is_no_rate_and_is_accepted_with_the_rate_axis() -> None:
    assert _issues(_doc(capacity=RATE, req_rate="inf")) == []
