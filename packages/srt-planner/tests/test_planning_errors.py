"""Planning errors come all at once, each with its ``$.path``, like load errors (one per line)."""

from __future__ import annotations

from typing import Any

import pytest
from planner_testkit import RecipeFactory

from srt_planner import plan_job
from srt_planner.errors import PlanningError, PlanningProblemsError
from srt_schema.cluster import ClusterConfig

PREFILL_TOO_BIG = (
    "$.roles.prefill: prefill does not fit: 2 worker(s) x 8 GPU(s) need more than the 1 "
    "node(s) x 8 GPUs of roles.prefill.nodes; raise roles.prefill.nodes or lower "
    "roles.prefill.workers / .gpus"
)
DECODE_TOO_BIG = (
    "$.roles.decode: decode does not fit: 3 worker(s) x 8 GPU(s) need more than the 2 "
    "node(s) x 8 GPUs of roles.decode.nodes; raise roles.decode.nodes or lower "
    "roles.decode.workers / .gpus"
)


def test_every_role_that_does_not_fit_is_named(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    roles = {
        "prefill": {"nodes": 1, "workers": 2, "gpus": 8},
        "decode": {"nodes": 2, "workers": 3, "gpus": 8},
    }
    with pytest.raises(PlanningProblemsError) as info:
        plan_job(make_recipe(roles=roles), cluster, "n[0-2]", "1")
    assert info.value.problems == (PREFILL_TOO_BIG, DECODE_TOO_BIG)
    assert str(info.value) == f"{PREFILL_TOO_BIG}\n{DECODE_TOO_BIG}"


def test_one_role_that_does_not_fit_is_one_problem(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    roles = {"prefill": {"nodes": 1, "workers": 2, "gpus": 8}, "decode": {"nodes": 1, "workers": 1}}
    with pytest.raises(PlanningError) as info:
        plan_job(make_recipe(roles=roles), cluster, "n[0-2]", "1")
    assert isinstance(info.value, PlanningProblemsError)
    assert info.value.problems == (PREFILL_TOO_BIG,)
    assert str(info.value) == PREFILL_TOO_BIG


def _service(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "command": ["python3", "-m", name], **fields}


def test_every_service_that_cannot_be_placed_is_named(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    services = [
        _service("builder", build_command=["make"]),
        _service("fine"),
        _service("sidecar", placement={"node": "head", "per": "worker"}),
    ]
    with pytest.raises(PlanningProblemsError) as info:
        plan_job(make_recipe(services=services), cluster, "n0", "1")
    assert info.value.problems == (
        "$.services[builder].build_command: runs in the service's source checkout, but the "
        "service has no source; add source: {git: <url>, rev: <tag or sha>}, or move the "
        "command into the service's preamble",
        "$.services[sidecar].placement.per: 'worker' needs placement.node prefill, decode, agg "
        "or workers and no 'nodes'",
    )


def test_each_problem_is_bounded_on_its_own() -> None:
    error = PlanningProblemsError(["$.a: " + "x" * 5_000, "$.b: short"])
    first, second = error.problems
    assert len(first) < 400
    assert first.startswith("$.a: xxx")
    assert second == "$.b: short"
    assert str(error) == f"{first}\n$.b: short"


def test_no_problem_is_a_bug() -> None:
    with pytest.raises(ValueError, match="at least one problem"):
        PlanningProblemsError([])


def test_more_workers_than_gpus_is_a_planning_error_not_an_index_error(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    # 9 workers on 2 nodes x 8 GPUs: 16 // 9 = 1 GPU each fits; 17 workers leave 0 each.
    roles = {"agg": {"nodes": 2, "workers": 17}}
    with pytest.raises(PlanningProblemsError) as info:
        plan_job(make_recipe(roles=roles), cluster, "n[0-2]", "1")
    assert info.value.problems == (
        "$.roles.agg: 17 agg worker(s) get 0 GPU(s) each (roles.agg.gpus, else the role's "
        "nodes x 8 GPUs per node // its workers); every worker needs at least one GPU: lower "
        "roles.agg.workers, raise roles.agg.nodes, or set roles.agg.gpus",
    )
