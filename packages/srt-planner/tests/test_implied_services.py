"""A declared etcd / NATS under another name replaces the implied one (two would share a port)."""

from __future__ import annotations

from planner_testkit import RecipeFactory

from srt_planner import plan_job
from srt_schema.cluster import ClusterConfig


def test_a_declared_etcd_of_any_name_replaces_the_implied_one(make_recipe: RecipeFactory) -> None:
    recipe = make_recipe(
        frontend={"type": "dynamo"},
        services=[{"name": "my-etcd", "type": "etcd"}],
    )
    plan = plan_job(recipe, ClusterConfig(), ["n0"], "1")
    etcd = [p for p in plan.processes if p.kind == "service" and "etcd" in p.name]
    assert [p.name for p in etcd] == ["service_my-etcd"]
