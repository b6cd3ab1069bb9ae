"""Carving the allocation: the dedicated-node, pool and het layouts of docs/planner.md#carving."""

from __future__ import annotations

from typing import Any

import pytest
from planner_testkit import RecipeFactory

from srt_planner.carving import carve_nodes
from srt_planner.errors import PlanningError

SIX = ("n0", "n1", "n2", "n3", "n4", "n5")
ETCD_DEDICATED = [{"name": "etcd", "type": "etcd", "placement": {"node": "dedicated"}}]


@pytest.mark.parametrize(
    ("frontend", "client", "colocate", "services", "expected"),
    [
        ("head", "head", True, [], ("n0", "n0", "n0", SIX)),
        ("dedicated", "head", True, [], ("n0", "n0", "n0", SIX[1:])),
        ("head", "dedicated", True, [], ("n0", "n5", "n0", SIX[:5])),
        ("dedicated", "dedicated", True, [], ("n5", "n5", "n5", SIX[:5])),
        ("dedicated", "dedicated", False, [], ("n0", "n5", "n0", SIX[1:5])),
        ("dedicated", "dedicated", False, ETCD_DEDICATED, ("n1", "n5", "n0", SIX[2:5])),
        ("head", "head", True, ETCD_DEDICATED, ("n1", "n1", "n0", SIX[1:])),
    ],
)
def test_e11_dedicated_carving(
    make_recipe: RecipeFactory,
    frontend: str,
    client: str,
    colocate: bool,
    services: list[dict[str, Any]],
    expected: tuple[str, str, str, tuple[str, ...]],
) -> None:
    recipe = make_recipe(
        frontend={"placement": {"node": frontend}},
        benchmark={"placement": {"node": client}, "colocate_with_frontend": colocate},
        services=services,
    )
    carving = carve_nodes(recipe, SIX)
    assert (carving.head, carving.bench, carving.infra, carving.workers) == expected


def test_e12_pools(make_recipe: RecipeFactory) -> None:
    services = [
        {"name": "train", "command": ["sleep", "1"], "nodes": 2},
        {"name": "napper", "command": ["sleep", "1"], "nodes": 1},
    ]
    carving = carve_nodes(make_recipe(services=services), SIX[:4])
    assert carving.workers == ("n0",)
    assert carving.pools == {"train": ("n1", "n2"), "napper": ("n3",)}


def test_short_allocation_for_pools(make_recipe: RecipeFactory) -> None:
    services = [{"name": "train", "command": ["sleep", "1"], "nodes": 2}]
    with pytest.raises(PlanningError) as info:
        carve_nodes(make_recipe(services=services), SIX[:2])
    assert str(info.value) == (
        "allocation has 2 non-reserved node(s) but the recipe needs 3: 1 for engine roles plus "
        "pools train=2"
    )


def test_dedicated_needs_a_spare_node(make_recipe: RecipeFactory) -> None:
    with pytest.raises(PlanningError) as info:
        carve_nodes(make_recipe(frontend={"placement": {"node": "dedicated"}}), ("n0",))
    assert (
        str(info.value)
        == "dedicated node(s) for frontend require at least 2 nodes; the allocation has 1 (n0)"
    )


def test_e13_het_groups(make_recipe: RecipeFactory) -> None:
    recipe = make_recipe(
        resources={"het_jobs": True},
        roles={"prefill": {"nodes": 2, "workers": 2}, "decode": {"nodes": 4, "workers": 1}},
        services=ETCD_DEDICATED,
    )
    carving = carve_nodes(recipe, (), het_groups=(("a0", "a1", "a2"), ("b0", "b1", "b2", "b3")))
    assert (carving.infra, carving.head, carving.bench) == ("a0", "a1", "a1")
    assert carving.het_prefill == ("a1", "a2")
    assert carving.het_decode == ("b0", "b1", "b2", "b3")
