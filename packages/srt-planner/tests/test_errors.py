"""Planner errors are bounded: a recipe value echoed in one shows ~200 characters, the fix stays."""

from __future__ import annotations

import pytest
from planner_testkit import RecipeFactory

from srt_planner import plan_job
from srt_planner.errors import PlanningError
from srt_schema.cluster import ClusterConfig


def test_a_long_value_in_a_planning_error_is_clipped(make_recipe: RecipeFactory) -> None:
    entry = "x" * 20_000
    with pytest.raises(PlanningError) as caught:
        plan_job(make_recipe(extra_mount=[entry]), ClusterConfig(), "n0", "1")
    message = str(caught.value)
    assert len(message) < 400, len(message)
    assert message == (
        f"$.extra_mount: '{'x' * 199}... (20002 characters) is not 'host:container' or "
        "'host:container:ro'"
    )
