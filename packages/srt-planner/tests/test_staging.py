"""Model staging in the plan (srt_planner.staging): one one-shot step per worker node before any
worker, the script they run, the staged path every engine loads, the mount of ``stage_dir``'s
parent, the local launcher's single step, and the recipes it refuses."""

from __future__ import annotations

from typing import Any

import pytest
from planner_testkit import RecipeFactory

from srt_planner import plan_allocation, plan_job
from srt_planner.errors import PlanningError
from srt_planner.plan import START_PHASES, JobPlan, ProcessSpec, StandIn
from srt_planner.staging import STAGE_SCRIPT
from srt_schema.cluster import ClusterConfig

CLUSTER = ClusterConfig(default_account="a", default_partition="p")
LOCAL = ClusterConfig(launcher="local", runtime_python="/venv")
NATIVE = ClusterConfig(default_account="a", default_partition="p", container_runtime="none")
DISAGG = {"prefill": {"nodes": 1, "workers": 1}, "decode": {"nodes": 1, "workers": 1}}
MODEL = {"path": "/models/qwen3/", "container": "img.sqsh", "stage_dir": "/raid/scratch/models/"}
STAGED = "/raid/scratch/models/qwen3"


def _plan(recipe: Any, cluster: ClusterConfig = CLUSTER, **kwargs: Any) -> JobPlan:
    request = plan_allocation(recipe, cluster, runner_name=None)
    nodes = [f"node-{i:02d}" for i in range(1, request.nodes + 1)]
    return plan_job(recipe, cluster, nodes, "77", **kwargs)


def _staging(plan: JobPlan) -> list[ProcessSpec]:
    return [p for p in plan.processes if p.phase == "model_staging"]


def _workers(plan: JobPlan) -> list[ProcessSpec]:
    return [p for p in plan.processes if p.kind == "worker"]


def _model_arg(spec: ProcessSpec) -> str:
    return spec.argv[spec.argv.index("--model-path") + 1]


def test_every_worker_node_stages_before_any_worker_and_the_engines_load_the_copy(
    make_recipe: RecipeFactory,
) -> None:
    bench = {"type": "sa-bench", "isl": 8, "osl": 8, "concurrencies": [2]}
    plan = _plan(make_recipe(model=MODEL, roles=DISAGG, benchmark=bench))
    steps = _staging(plan)
    assert [s.name for s in steps] == ["stage_model_node-01", "stage_model_node-02"]
    assert plan.node_roles.workers == ("node-01", "node-02")
    for step in steps:
        node = step.nodes[0]
        assert step.argv == ("python3", f"/logs/{STAGE_SCRIPT}", "/model", STAGED)
        assert (step.oneshot, step.critical, step.order, step.timeout_seconds) == (
            True,
            True,
            0,
            None,
        )
        assert step.log_file == f"stage_model_{node}.out"
        assert step.implied_by == "model.stage_dir"
        assert step.container is not None and step.container.image == "img.sqsh"
        srun = step.srun_argv
        assert srun[srun.index("--nodelist") + 1] == node
        assert srun[srun.index("--output") + 1].endswith(f"/stage_model_{node}.out")
        assert srun[-1] == f"exec python3 /logs/{STAGE_SCRIPT} /model {STAGED}"
    # The start phase sits between the services started before workers and the workers.
    assert START_PHASES.index("before_workers") < START_PHASES.index("model_staging")
    assert START_PHASES.index("model_staging") < START_PHASES.index("workers")
    phases = [START_PHASES.index(p.phase) for p in plan.processes]
    assert phases == sorted(phases)
    workers = _workers(plan)
    assert workers and all(_model_arg(w) == STAGED for w in workers)
    # The benchmark may run off the worker nodes: it reads the shared folder's tokenizer.
    (script,) = [f for f in plan.files if f.path == STAGE_SCRIPT]
    assert script.mode == 0o755 and "up to date, skipped" in script.content
    assert '"tokenizer_path":"/model"' in next(f.content for f in plan.files if "bench" in f.path)


def test_every_container_mounts_the_parent_of_stage_dir_on_the_same_path(
    make_recipe: RecipeFactory,
) -> None:
    plan = _plan(make_recipe(model=MODEL, roles=DISAGG))
    containers = [p.container for p in plan.processes if p.container is not None]
    assert containers
    for container in containers:
        pairs = [(m.host, m.container, m.source) for m in container.mounts]
        assert pairs[:3] == [
            ("./outputs/77/logs", "/logs", "built-in"),
            ("/models/qwen3/", "/model", "built-in"),
            ("/raid/scratch", "/raid/scratch", "built-in"),
        ]


def test_without_stage_dir_nothing_is_staged_or_mounted(make_recipe: RecipeFactory) -> None:
    plan = _plan(make_recipe(roles=DISAGG))
    assert _staging(plan) == []
    assert all(f.path != STAGE_SCRIPT for f in plan.files)
    assert all(_model_arg(w) == "/model" for w in _workers(plan))
    mounts = {m.container for p in plan.processes if p.container for m in p.container.mounts}
    assert mounts == {"/logs", "/model"}


def test_stage_parallel_from_the_recipe_environment_reaches_the_step(
    make_recipe: RecipeFactory,
) -> None:
    plan = _plan(make_recipe(model=MODEL, environment={"STAGE_PARALLEL": "4", "X": "1"}))
    (step,) = _staging(plan)
    assert step.env == {"STAGE_PARALLEL": "4"}
    assert step.srun_argv[-1].startswith("export STAGE_PARALLEL=4 && exec python3 ")


def test_the_local_launcher_stages_once_for_its_simulated_nodes(
    make_recipe: RecipeFactory,
) -> None:
    model = {**MODEL, "path": "/data/qwen3"}
    plan = _plan(make_recipe(model=model, roles=DISAGG), LOCAL)
    (step,) = _staging(plan)
    assert step.name == "stage_model_node-01"
    assert step.srun_argv == () and step.container is None
    log_dir = "./outputs/77/logs"
    assert step.argv == ("/venv/bin/python", f"{log_dir}/{STAGE_SCRIPT}", "/data/qwen3", STAGED)
    assert {w.nodes[0] for w in _workers(plan)} == {"node-01", "node-02"}
    assert all(_model_arg(w) == STAGED for w in _workers(plan))


def test_a_native_slurm_job_stages_on_every_worker_node_from_the_model_folder(
    make_recipe: RecipeFactory,
) -> None:
    model = {**MODEL, "path": "/data/qwen3", "stage_dir": "/stage"}
    plan = _plan(make_recipe(model=model, roles=DISAGG), NATIVE)
    steps = _staging(plan)
    assert [s.nodes for s in steps] == [("node-01",), ("node-02",)]
    for step in steps:
        assert step.argv[2:] == ("/data/qwen3", "/stage/qwen3")
        assert "--container-image" not in step.srun_argv


def test_stand_in_engines_stage_nothing(make_recipe: RecipeFactory) -> None:
    recipe = make_recipe(model=MODEL, engine="mocker", frontend={"type": "dynamo"})
    plan = _plan(recipe, LOCAL, stand_in=StandIn(model="/stand-in"))
    assert _staging(plan) == []
    assert all(_model_arg(w) == "/stand-in" for w in _workers(plan))


@pytest.mark.parametrize(
    ("model", "cluster", "message"),
    [
        (
            {"path": "hf:Org/m", "container": "c", "stage_dir": "/raid/models"},
            CLUSTER,
            "$.model.stage_dir: an hf: model has no folder to stage (the workers download it by "
            "id); remove stage_dir, or point model.path at a downloaded model folder",
        ),
        (
            {"path": "/m/x", "container": "c", "stage_dir": "scratch/models"},
            LOCAL,
            "$.model.stage_dir: 'scratch/models' is not an absolute path; set a node-local "
            "folder such as /raid/scratch/models",
        ),
        (
            {"path": "/m/x", "container": "c", "stage_dir": "/stage"},
            CLUSTER,
            "$.model.stage_dir: '/stage' lies directly under /, and its parent is what every "
            "container mounts; use a folder at least two levels deep such as "
            "/raid/scratch/models",
        ),
    ],
)
def test_a_stage_dir_that_cannot_work_is_refused(
    make_recipe: RecipeFactory, model: dict[str, str], cluster: ClusterConfig, message: str
) -> None:
    with pytest.raises(PlanningError) as info:
        _plan(make_recipe(model=model), cluster)
    assert str(info.value) == message
