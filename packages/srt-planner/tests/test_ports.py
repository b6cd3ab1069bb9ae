from __future__ import annotations

from typing import Any

import pytest

from srt_planner.errors import PlanningError
from srt_planner.ports import PortAllocator, check_port_conflicts


def test_per_node_kinds_restart_on_every_node() -> None:
    ports = PortAllocator()
    assert [ports.take("http", "a"), ports.take("http", "a"), ports.take("http", "b")] == [
        6100,
        6132,
        6100,
    ]


def test_local_launcher_makes_per_node_kinds_job_wide() -> None:
    ports = PortAllocator(single_host=True)
    assert [ports.take("http", "a"), ports.take("http", "b")] == [6100, 6132]


def test_job_wide_counters_wrap_inside_their_range() -> None:
    ports = PortAllocator()
    taken = [ports.take("kv_events", f"n{i}") for i in range(201)]
    assert taken[199] == 5399 and taken[200] == 5200


def test_blocks_stay_contiguous_when_wrapping() -> None:
    ports = PortAllocator()
    ports.take("kv_events", "a", 190)
    assert ports.take("kv_events", "b", 16) == 5200


def test_per_node_range_exhausted() -> None:
    ports = PortAllocator()
    for _ in range(100):
        ports.take("bootstrap", "a")
    with pytest.raises(PlanningError) as info:
        ports.take("bootstrap", "a")
    assert str(info.value) == (
        "port range exhausted: bootstrap ports 7200-7299 are all taken on a; "
        "put fewer workers on one node"
    )


def test_conflict_names_both_processes() -> None:
    with pytest.raises(PlanningError) as info:
        check_port_conflicts([("h", "p1", "http", 80), ("h", "p2", "sys", 80)])
    assert (
        str(info.value) == "port 80 on h is bound twice: p1 (http) and p2 (sys); change one of them"
    )


def test_a_multi_node_data_parallel_vllm_worker_gets_a_nixl_block_per_node_on_one_host(
    make_recipe: Any,
) -> None:
    """On a cluster the nodes of a DP worker share one NIXL block (each binds it on its own
    host); on the local launcher every node is this host, so each gets its own block."""
    from srt_planner import plan_job
    from srt_schema.cluster import ClusterConfig

    roles = {
        "agg": {
            "nodes": 2,
            "workers": 1,
            "gpus": 16,
            "args": {"data-parallel-size": 16, "tensor-parallel-size": 1},
        }
    }
    recipe = make_recipe(engine="vllm", roles=roles, frontend={"type": "vllm-router"})
    slurm = [p for p in plan_job(recipe, ClusterConfig(), "n[0-1]", "1").processes
             if p.kind == "worker"]  # fmt: skip
    assert slurm[0].ports["nixl"] == slurm[1].ports["nixl"]
    local = ClusterConfig(launcher="local", container_runtime="none")
    here = [p for p in plan_job(recipe, local, "n[0-1]", "1").processes if p.kind == "worker"]
    assert here[0].ports["nixl"] != here[1].ports["nixl"]
    assert abs(here[0].ports["nixl"] - here[1].ports["nixl"]) >= 8
