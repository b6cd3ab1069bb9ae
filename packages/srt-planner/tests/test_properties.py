"""Property tests over generated recipes and node lists (docs/design.md#test-tiers, property
tier)."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st
from planner_testkit import build_recipe

from srt_planner import JobPlan, plan_allocation, plan_job
from srt_schema.cluster import ClusterConfig


@st.composite
def _role(draw: st.DrawFn, gpn: int) -> dict[str, Any]:
    divisors = [d for d in (1, 2, 4, 8) if gpn % d == 0]
    gpus = draw(st.sampled_from([*divisors, gpn * 2]))
    workers = draw(st.integers(min_value=1, max_value=4))
    nodes = -(-(workers * gpus) // gpn)
    return {"nodes": nodes, "workers": workers, "gpus": gpus}


@st.composite
def _case(draw: st.DrawFn) -> tuple[dict[str, Any], ClusterConfig]:
    gpn = draw(st.sampled_from([1, 2, 4, 8]))
    engine = draw(st.sampled_from(["sglang", "vllm", "mocker", "trtllm"]))
    if draw(st.booleans()):
        roles = {"agg": draw(_role(gpn))}
    else:
        roles = {"prefill": draw(_role(gpn)), "decode": draw(_role(gpn))}
    frontend = draw(
        st.sampled_from(["dynamo", "sglang-router"] if engine == "sglang" else ["dynamo"])
    )
    failover = engine == "vllm" and draw(st.booleans())
    fields: dict[str, Any] = {
        "engine": {"type": "vllm", "failover": {"shadow_engines": draw(st.integers(1, 2))}}
        if failover
        else engine,
        "resources": {"gpus_per_node": gpn},
        "roles": roles,
        "frontend": {
            "type": frontend,
            "enable_multiple_frontends": draw(st.booleans()),
            "num_additional_frontends": draw(st.integers(min_value=0, max_value=3)),
        },
        "dynamo": {
            "request_plane": draw(st.sampled_from(["tcp", "nats"])),
            # Dynamo sidecar mode (SGLang): one loopback gRPC port per endpoint leader.
            "sidecar": engine == "sglang" and frontend == "dynamo" and draw(st.booleans()),
        },
        "benchmark": {"type": "sa-bench", "isl": 8, "osl": 8, "concurrencies": [1]},
    }
    if draw(st.booleans()):
        fields["frontend"]["placement"] = {"node": draw(st.sampled_from(["head", "dedicated"]))}
        fields["benchmark"]["placement"] = {"node": draw(st.sampled_from(["head", "dedicated"]))}
        fields["benchmark"]["colocate_with_frontend"] = draw(st.booleans())
    pools = draw(st.integers(min_value=0, max_value=2))
    fields["services"] = [
        {
            "name": f"pool{i}",
            "command": ["sleep", "{pool_node_count}"],
            "nodes": draw(st.integers(1, 2)),
        }
        for i in range(pools)
    ]
    if draw(st.booleans()):
        fields["services"].append(
            {
                "name": "side",
                "command": ["echo", "{worker_gpus}"],
                "placement": {"node": "workers", "per": "worker"},
            }
        )
    fields["resources"]["spread_workers"] = draw(st.booleans()) and "agg" in roles
    if fields["resources"]["spread_workers"]:
        agg = roles["agg"]
        agg["nodes"] = agg["workers"] * -(-agg["gpus"] // gpn)
    local = draw(st.booleans())
    cluster = ClusterConfig(
        launcher="local" if local else "slurm",
        container_runtime="none" if local or draw(st.booleans()) else "pyxis",
    )
    return fields, cluster


_names = st.from_regex(r"[a-z]{1,4}-[0-9]{1,3}", fullmatch=True)


def _plan(case: tuple[dict[str, Any], ClusterConfig], data: st.DataObject) -> JobPlan:
    fields, cluster = case
    recipe = build_recipe(**fields)
    count = plan_allocation(recipe, cluster).nodes
    nodes = data.draw(st.lists(_names, min_size=count, max_size=count, unique=True))
    return plan_job(recipe, cluster, nodes, "4242")


@settings(max_examples=150, deadline=None)
@given(_case(), st.data())
def test_plan_invariants(case: tuple[dict[str, Any], ClusterConfig], data: st.DataObject) -> None:
    plan = _plan(case, data)
    allocation = set(plan.nodes)
    gpus_taken: set[tuple[str, int]] = set()
    ports_taken: set[tuple[str, int]] = set()
    by_name = {spec.name: spec for spec in plan.processes}
    for spec in plan.processes:
        assert set(spec.nodes) <= allocation, spec.name
        if spec.kind == "worker" and spec.shares_gpus_with is not None:
            # A shadow engine (vLLM failover) uses exactly its worker's GPUs, nothing else.
            owner = by_name[spec.shares_gpus_with]
            assert spec.engine > 0, spec.name
            assert (owner.kind, owner.engine, owner.role, owner.index) == (
                "worker",
                0,
                spec.role,
                spec.index,
            )
            assert (owner.nodes, owner.gpus) == (spec.nodes, spec.gpus), spec.name
        elif spec.kind == "worker":
            # No GPU is given to two workers.
            assert spec.engine == 0, spec.name
            per_node = spec.node_gpus or {node: spec.gpus for node in spec.nodes}
            for node, gpus in per_node.items():
                for gpu in gpus:
                    assert (node, gpu) not in gpus_taken, (spec.name, node, gpu)
                    gpus_taken.add((node, gpu))
        host = "localhost" if plan.launcher == "local" else spec.nodes[0]
        for port in spec.ports.values():
            assert (host, port) not in ports_taken, (spec.name, host, port)
            ports_taken.add((host, port))


@settings(max_examples=60, deadline=None)
@given(_case(), st.data())
def test_plan_is_deterministic_and_round_trips(
    case: tuple[dict[str, Any], ClusterConfig], data: st.DataObject
) -> None:
    fields, cluster = case
    recipe = build_recipe(**fields)
    count = plan_allocation(recipe, cluster).nodes
    nodes = data.draw(st.lists(_names, min_size=count, max_size=count, unique=True))
    first = msgspec.json.encode(plan_job(recipe, cluster, nodes, "1"))
    second = msgspec.json.encode(plan_job(build_recipe(**fields), cluster, list(nodes), "1"))
    assert first == second
    assert msgspec.json.encode(msgspec.json.decode(first, type=JobPlan)) == first
    assert msgspec.json.decode(first, type=JobPlan) == plan_job(recipe, cluster, nodes, "1")
