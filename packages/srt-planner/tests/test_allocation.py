from __future__ import annotations

import pytest
from planner_testkit import RecipeFactory

from srt_planner import plan_job
from srt_planner.allocation import plan_allocation
from srt_planner.errors import PlanningError
from srt_planner.sbatch import render_sbatch
from srt_schema.cluster import ClusterConfig

DISAGG = {
    "prefill": {"nodes": 2, "workers": 4, "gpus": 2},
    "decode": {"nodes": 4, "workers": 2, "gpus": 8},
}


def test_e8_node_count_and_tasks(make_recipe: RecipeFactory, cluster: ClusterConfig) -> None:
    recipe = make_recipe(resources={"gpus_per_node": 4, "gpu_type": "gb200"}, roles=DISAGG)
    request = plan_allocation(recipe, cluster)
    assert (request.nodes, request.ntasks, request.ntasks_per_node) == (6, 6, 1)
    assert (request.gpus_per_node, request.segment) == (4, 6)


def test_trtllm_asks_one_task_per_gpu(make_recipe: RecipeFactory, cluster: ClusterConfig) -> None:
    recipe = make_recipe(
        engine="trtllm",
        resources={"gpus_per_node": 4},
        roles={
            "prefill": {"nodes": 3, "workers": 2, "gpus": 6},
            "decode": {"nodes": 0 + 1, "workers": 1},
        },
    )
    request = plan_allocation(recipe, cluster)
    assert (request.nodes, request.ntasks, request.ntasks_per_node) == (4, 16, 4)


def test_colocated_decode_owns_no_nodes(make_recipe: RecipeFactory, cluster: ClusterConfig) -> None:
    roles = {
        "prefill": {"nodes": 1, "workers": 2, "gpus": 2},
        "decode": {"nodes": "colocate", "workers": 1, "gpus": 4},
    }
    assert plan_allocation(make_recipe(roles=roles), cluster).nodes == 1


@pytest.mark.parametrize(
    ("frontend", "client", "colocate", "extra"),
    [
        ("dedicated", "head", True, 1),
        ("dedicated", "dedicated", True, 1),
        ("dedicated", "dedicated", False, 2),
    ],
)
def test_dedicated_nodes(
    make_recipe: RecipeFactory,
    cluster: ClusterConfig,
    frontend: str,
    client: str,
    colocate: bool,
    extra: int,
) -> None:
    recipe = make_recipe(
        frontend={"placement": {"node": frontend}},
        benchmark={"placement": {"node": client}, "colocate_with_frontend": colocate},
        roles={"agg": {"nodes": 5, "workers": 5}},
    )
    assert plan_allocation(recipe, cluster).nodes == 5 + extra


def test_pools_add_nodes(make_recipe: RecipeFactory, cluster: ClusterConfig) -> None:
    services = [
        {"name": "train", "command": ["sleep", "1"], "nodes": 2},
        {"name": "napper", "command": ["sleep", "1"], "nodes": 1},
        {"name": "watcher", "command": ["sleep", "1"], "placement": {"pool": "train"}},
    ]
    assert plan_allocation(make_recipe(services=services), cluster).nodes == 4


def test_het_components_e13(make_recipe: RecipeFactory, cluster: ClusterConfig) -> None:
    recipe = make_recipe(
        resources={"gpus_per_node": 4, "het_jobs": True},
        roles={"prefill": {"nodes": 2, "workers": 2}, "decode": {"nodes": 4, "workers": 1}},
        services=[{"name": "etcd", "type": "etcd", "placement": {"node": "dedicated"}}],
    )
    request = plan_allocation(recipe, cluster)
    assert [(c.nodes, c.segment) for c in request.het] == [(3, 3), (4, 4)]
    text = render_sbatch(request, output_base="/out", command=("srt-runtime", "run"))
    assert (
        "#SBATCH --nodes=3\n#SBATCH --ntasks=3\n#SBATCH --ntasks-per-node=1\n"
        "#SBATCH --gpus-per-node=4\n#SBATCH --segment=3\n" in text
    )
    assert "#SBATCH hetjob\n#SBATCH --nodes=4\n" in text


def test_het_on_agg_recipe_is_an_error(make_recipe: RecipeFactory, cluster: ClusterConfig) -> None:
    with pytest.raises(PlanningError) as info:
        plan_allocation(make_recipe(resources={"het_jobs": True}), cluster)
    assert str(info.value) == (
        "$.resources.het_jobs: heterogeneous jobs need roles.prefill and roles.decode; "
        "remove het_jobs or make the recipe disaggregated"
    )


def test_sbatch_text(make_recipe: RecipeFactory) -> None:
    cluster = ClusterConfig(
        default_account="acct",
        default_sbatch_directives={"gres": "gpu:8", "comment": "from cluster"},
        use_exclusive_sbatch_directive=True,
    )
    recipe = make_recipe(
        sbatch_directives={"comment": "two words", "reservation": ""},
        slurm={"time_limit": "00:15:00"},
    )
    request = plan_allocation(recipe, cluster, runner_name="ci run")
    text = render_sbatch(
        request,
        output_base="/out dir",
        command=("srt-runtime", "run", "plan.json"),
        environment={"B": "2", "A": "x y"},
    )
    assert text.splitlines()[:14] == [
        "#!/bin/bash",
        "#SBATCH --job-name='ci run'",
        "#SBATCH --output='/out dir/%j/logs/sweep_%j.log'",
        "#SBATCH --nodes=1",
        "#SBATCH --ntasks=1",
        "#SBATCH --ntasks-per-node=1",
        "#SBATCH --gpus-per-node=8",
        "#SBATCH --segment=1",
        "#SBATCH --exclusive",
        "#SBATCH --account=acct",
        "#SBATCH --time=00:15:00",
        "#SBATCH --partition=default",
        "#SBATCH --comment='two words'",
        "#SBATCH --gres=gpu:8",
    ]
    assert "#SBATCH --reservation\n" in text
    assert "export A='x y'\nexport B=2\nset +e\nsrt-runtime run plan.json &\n" in text
    # the script outlives a scancel until the supervisor has cleaned up
    assert "trap ':' TERM INT\n" in text
    assert render_sbatch(request, output_base="/out dir", command=("x",)) == render_sbatch(
        request, output_base="/out dir", command=("x",)
    )


def test_zero_nodes_is_an_error(make_recipe: RecipeFactory, cluster: ClusterConfig) -> None:
    with pytest.raises(PlanningError, match=r"asks for 0 nodes"):
        plan_allocation(make_recipe(roles={}), cluster)


def test_vllm_prefill_decode_colocation_packs_by_gpus(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    roles = {
        "prefill": {"nodes": 1, "workers": 1, "gpus": 4},
        "decode": {"nodes": 1, "workers": 1, "gpus": 4},
    }
    recipe = make_recipe(
        engine={"type": "vllm", "allow_prefill_decode_colocation": True}, roles=roles
    )
    assert plan_allocation(recipe, cluster).nodes == 1
    plan = plan_job(recipe, cluster, "n0", "1")
    workers = [(s.name, s.gpus) for s in plan.processes if s.kind == "worker"]
    assert workers == [("prefill_0_n0", (0, 1, 2, 3)), ("decode_0_n0", (4, 5, 6, 7))]
