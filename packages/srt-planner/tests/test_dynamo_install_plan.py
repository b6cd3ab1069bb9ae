"""Where the plan installs Dynamo (srt_planner.dynamo_install): in the container's interpreter
under pyxis, into a job-owned folder off-container, nowhere for stand-in plans or without a source
off-container. The script itself runs in packages/srt-runtime/tests/test_dynamo_install.py."""

from __future__ import annotations

from planner_testkit import RecipeFactory

from srt_planner import plan_job
from srt_planner.dynamo_install import INSTALL_SCRIPT
from srt_planner.plan import JobPlan, ProcessSpec, StandIn
from srt_schema.cluster import ClusterConfig

LOCAL = ClusterConfig(container_runtime="none", launcher="local")
GIT = {"git": "https://example.org/dynamo.git", "rev": "v1", "patches": ["a.patch", "/p/b.patch"]}


def _dynamo_steps(plan: JobPlan) -> list[ProcessSpec]:
    return [p for p in plan.processes if p.kind in ("worker", "frontend")]


def test_pyxis_steps_install_into_their_container(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(dynamo={"source": GIT}, frontend={"type": "dynamo"})
    plan = plan_job(recipe, cluster, "n[0-1]", "1")
    script = {f.path: f for f in plan.files}[INSTALL_SCRIPT].content.splitlines()
    assert "mode=container" in script
    assert "configs=/configs" in script
    assert "patches=(a.patch /p/b.patch)" in script
    for step in _dynamo_steps(plan):
        node = step.nodes[0]
        index = step.preamble.index(f"bash /logs/{INSTALL_SCRIPT} {node}")
        # The stub case: no /logs, no install into the host's interpreter.
        assert step.preamble[index - 1].startswith(f"{{ [ -f /logs/{INSTALL_SCRIPT} ] || ")
        assert "is it running in a container?" in step.preamble[index - 1]
        assert not any("PYTHONPATH" in line for line in step.preamble)
        assert "--export=ALL,ENROOT_REMAP_ROOT=yes" in step.srun_argv


def test_off_container_an_explicit_source_goes_to_the_job_folder(
    make_recipe: RecipeFactory,
) -> None:
    recipe = make_recipe(dynamo={"source": GIT}, frontend={"type": "dynamo"})
    plan = plan_job(recipe, LOCAL, "n0", "1", log_dir="/out/1/logs")
    script = {f.path: f for f in plan.files}[INSTALL_SCRIPT].content.splitlines()
    assert "mode=prefix" in script
    assert "configs=configs" in script
    steps = _dynamo_steps(plan)
    assert steps
    for step in steps:
        assert f"bash /out/1/logs/{INSTALL_SCRIPT} n0" in step.preamble
        assert (
            'export PYTHONPATH=/out/1/logs/dynamo_install/n0/site"${PYTHONPATH:+:$PYTHONPATH}"'
            in step.preamble
        )


def test_off_container_the_configs_folder_is_under_srtctl_root(
    make_recipe: RecipeFactory,
) -> None:
    recipe = make_recipe(dynamo={"source": GIT}, frontend={"type": "dynamo"})
    cluster = ClusterConfig(container_runtime="none", launcher="local", srtctl_root="/srv/srt/")
    plan = plan_job(recipe, cluster, "n0", "1", log_dir="/out/1/logs")
    script = {f.path: f for f in plan.files}[INSTALL_SCRIPT].content.splitlines()
    assert "configs=/srv/srt/configs" in script


def test_nothing_is_installed_off_container_without_a_source_or_for_stand_ins(
    make_recipe: RecipeFactory,
) -> None:
    plain = plan_job(make_recipe(frontend={"type": "dynamo"}), LOCAL, "n0", "1")
    stand_in = plan_job(
        make_recipe(dynamo={"top_of_tree": True}, frontend={"type": "dynamo"}),
        LOCAL,
        "n0",
        "1",
        stand_in=StandIn(model="/tmp/stand-in"),
    )
    for plan in (plain, stand_in):
        assert INSTALL_SCRIPT not in {f.path for f in plan.files}
        for step in _dynamo_steps(plan):
            assert not any(INSTALL_SCRIPT in line for line in step.preamble)


def test_the_script_is_deterministic(make_recipe: RecipeFactory, cluster: ClusterConfig) -> None:
    recipe = make_recipe(dynamo={"top_of_tree": True}, frontend={"type": "dynamo"})
    first = plan_job(recipe, cluster, "n0", "1")
    second = plan_job(recipe, cluster, "n0", "1")
    assert first.files == second.files
    script = {f.path: f for f in first.files}[INSTALL_SCRIPT].content.splitlines()
    assert "kind=top_of_tree" in script
    assert "repo=https://github.com/ai-dynamo/dynamo.git" in script
    assert "want=HEAD" in script
