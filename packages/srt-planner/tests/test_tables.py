"""The validator and the planner read one table per vocabulary and agree on every row.

For each service kind of ``SERVICE_KINDS`` and each frontend of ``FRONTENDS`` a small recipe is
validated (``srt_schema.validate``) and planned (``srt_planner``); the plan must put the kind
where the table says (nodes, phase, criticality, ports, probe) and gate the frontend with the
table's family.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from planner_testkit import build_recipe

from srt_planner import JobPlan, plan_allocation, plan_job
from srt_planner import ports as planner_ports
from srt_planner.context import FRONTEND_TYPES
from srt_planner.plan import HttpProbe, LogProbe, ProcessSpec, TcpProbe
from srt_schema.cluster import ClusterConfig
from srt_schema.recipe import Recipe
from srt_schema.registry import FRONTENDS, SERVICE_KINDS, is_direct
from srt_schema.roles import ENGINE_CAPABILITIES, engine_struct, is_mpi
from srt_schema.validate import validate_recipe

_SOURCE = {
    "git": "https://example.com/store.git",
    "rev": "0123456789abcdef0123456789abcdef01234567",
}
_PROBES = {"tcp": TcpProbe, "http": HttpProbe, "log": LogProbe}


def _valid(recipe: Recipe) -> Recipe:
    issues = validate_recipe(recipe, msgspec.to_builtins(recipe), file="t.yaml")
    assert [f"{i.path}: {i.message}" for i in issues] == []
    return recipe


def _plan(recipe: Recipe, cluster: ClusterConfig) -> JobPlan:
    nodes = plan_allocation(recipe, cluster).nodes
    return plan_job(recipe, cluster, [f"n{i}" for i in range(nodes)], "7")


def _service_recipe(kind: str, **extra: Any) -> Recipe:
    # Named after its kind: it replaces an implied service of that kind (etcd, exporters).
    service: dict[str, Any] = {"name": kind, "type": kind, **extra}
    if not SERVICE_KINDS[kind].has_command or kind.endswith("-exporter"):
        service["command"] = ["sleep", "infinity"]
    services = [service]
    if kind == "mooncake-store":
        services.append({"name": "master", "type": "mooncake-master"})
    # Two single-node agg workers: a worker placement is two nodes, a single-node one is one.
    return build_recipe(
        frontend={"type": "sglang-router"},
        roles={"agg": {"nodes": 2, "workers": 2}},
        services=services,
    )


def _instances(plan: JobPlan, kind: str) -> list[ProcessSpec]:
    """The kind's instances (not the one-shot clone/build steps of a ``source``)."""
    steps = (f"service_{kind}_clone", f"service_{kind}_build")
    return [
        p for p in plan.processes if p.kind == "service" and p.role == kind and p.name not in steps
    ]


def _nodes_of(plan: JobPlan, placement: str) -> tuple[str, ...]:
    roles = plan.node_roles
    match placement:
        case "head":
            return (roles.head,)
        case "infra" | "dedicated":
            return (roles.infra,)
        case "workers":
            return roles.workers
        case "all":
            return tuple(dict.fromkeys((*roles.workers, roles.head, roles.infra, roles.bench)))
        case other:
            raise AssertionError(f"no expectation for placement {other}")


@pytest.mark.parametrize("kind", sorted(SERVICE_KINDS))
def test_service_kind_is_planned_where_the_table_says(kind: str, cluster: ClusterConfig) -> None:
    row = SERVICE_KINDS[kind]
    plan = _plan(_valid(_service_recipe(kind)), cluster)
    specs = _instances(plan, kind)
    assert tuple(s.nodes[0] for s in specs) == _nodes_of(plan, row.placement)
    assert {s.phase for s in specs} == {row.start}
    assert {s.critical for s in specs} == {row.critical}
    first = specs[0]
    if not kind.endswith("-exporter"):
        assert first.ports == dict(row.ports)
    probe = _PROBES.get(row.readiness)
    assert first.readiness is None if probe is None else isinstance(first.readiness, probe)
    assert first.stop_tier == (2 if row.start == "infra" else 1)


@pytest.mark.parametrize(
    "kind", sorted(k for k, row in SERVICE_KINDS.items() if row.placement in ("head", "infra"))
)
def test_single_node_kinds_take_a_source_and_plan_one_instance(
    kind: str, cluster: ClusterConfig
) -> None:
    """The validator's rule 'a git source needs a single-node placement' and the plan agree:
    every kind the table places on one node passes it and is planned on exactly one node."""
    plan = _plan(_valid(_service_recipe(kind, source=_SOURCE)), cluster)
    assert len(_instances(plan, kind)) == 1


def test_mooncake_store_runs_once_on_the_head_node(cluster: ClusterConfig) -> None:
    plan = _plan(_valid(_service_recipe("mooncake-store", source=_SOURCE)), cluster)
    assert [s.nodes for s in _instances(plan, "mooncake-store")] == [(plan.node_roles.head,)]
    assert len(plan.node_roles.workers) == 2


def test_kind_ports_are_the_planner_port_constants() -> None:
    assert dict(SERVICE_KINDS["etcd"].ports) == {
        "client": planner_ports.ETCD_CLIENT_PORT,
        "peer": planner_ports.ETCD_PEER_PORT,
    }
    assert dict(SERVICE_KINDS["nats"].ports) == {"client": planner_ports.NATS_PORT}
    assert dict(SERVICE_KINDS["mooncake-master"].ports) == {
        "rpc": planner_ports.MOONCAKE_RPC_PORT,
        "http": planner_ports.MOONCAKE_HTTP_PORT,
        "metrics": planner_ports.MOONCAKE_METRICS_PORT,
    }


def test_the_planner_dispatches_on_every_frontend_of_the_table() -> None:
    assert set(FRONTEND_TYPES) == {n for n, info in FRONTENDS.items() if info.alias_of is None}


def _frontend_recipes(name: str) -> list[tuple[str, Recipe]]:
    info = FRONTENDS[name]
    # TileRT runs single-node decode workers only: tilert-router is planned with vLLM.
    engine = "vllm" if name == "tilert-router" else (info.engines or ("sglang",))[0]
    frontend: dict[str, Any] = {"type": name}
    if info.serving in ("worker", "worker_if_agg"):
        frontend["enable_multiple_frontends"] = False
    if info.serving == "none":
        terminal = {
            "name": "job",
            "type": "generic",
            "command": ["true"],
            "terminal": True,
            "nodes": 1,
        }
        fields: dict[str, Any] = {"roles": {}, "services": [terminal]}
        return [
            ("none", build_recipe(frontend={"type": name}, benchmark={"type": "manual"}, **fields))
        ]
    agg = {"agg": {"nodes": 1, "workers": 1}}
    disagg = {"prefill": {"nodes": 1, "workers": 1}, "decode": {"nodes": 1, "workers": 1}}
    layouts = [("agg", agg)]
    if info.serving != "worker":
        layouts.append(("disagg", disagg))
    return [
        (label, build_recipe(frontend=frontend, roles=roles, engine=engine))
        for label, roles in layouts
    ]


@pytest.mark.parametrize(
    ("name", "layout", "recipe"),
    [
        pytest.param(n, label, r, id=f"{n}-{label}")
        for n in sorted(FRONTENDS)
        for label, r in _frontend_recipes(n)
    ],
)
def test_frontend_is_planned_as_the_table_says(
    name: str, layout: str, recipe: Recipe, cluster: ClusterConfig
) -> None:
    info = FRONTENDS[name]
    plan = _plan(_valid(recipe), cluster)
    assert plan.health.family == info.family
    frontends = [p for p in plan.processes if p.kind == "frontend"]
    if info.serving == "none" or is_direct(name, layout == "disagg"):
        assert frontends == []
        return
    assert frontends
    for spec in frontends:
        if info.module:
            assert spec.argv[1:3] == ("-m", info.program)
        else:
            assert spec.argv[0] == info.program


@pytest.mark.parametrize("engine", ["sglang", "vllm", "trtllm", "mocker"])
def test_engine_mpi_capability_is_how_workers_launch(engine: str, cluster: ClusterConfig) -> None:
    """``ENGINE_CAPABILITIES[...].mpi_launch`` is the one answer: one MPI srun per endpoint."""
    recipe = build_recipe(
        engine=engine, frontend={"type": "dynamo"}, roles={"agg": {"nodes": 1, "workers": 1}}
    )
    plan = _plan(_valid(recipe), cluster)
    workers = [p for p in plan.processes if p.kind == "worker"]
    launched_by_mpi = any("--mpi" in p.srun_argv for p in workers)
    assert launched_by_mpi == ENGINE_CAPABILITIES[engine].mpi_launch
    assert launched_by_mpi == is_mpi(engine_struct(engine))
