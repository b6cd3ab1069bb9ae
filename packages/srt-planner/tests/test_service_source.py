"""``services[].source`` / ``build_command`` / ``build_timeout_seconds`` in the plan: a clone step
and a build step before the service, which then runs from its checkout."""

from __future__ import annotations

from typing import Any

import pytest
from planner_testkit import RecipeFactory

from srt_planner import plan_job
from srt_planner.errors import PlanningError
from srt_planner.plan import JobPlan, ProcessSpec
from srt_schema.cluster import ClusterConfig

SHA = "0123456789abcdef0123456789abcdef01234567"
GIT = "https://github.com/org/router.git"


def _service(**fields: Any) -> dict[str, Any]:
    service: dict[str, Any] = {
        "name": "router",
        "command": ["python3", "-m", "router", "--dir", "{source_dir}"],
        "source": {"git": GIT, "rev": "v1.2", "sha": SHA, "path": "py"},
        "build_command": ["pip", "install", "-e", "."],
        "build_timeout_seconds": 300,
    }
    service.update(fields)
    return service


def _plan(make_recipe: RecipeFactory, cluster: ClusterConfig, **fields: Any) -> JobPlan:
    recipe = make_recipe(services=[_service(**fields)])
    return plan_job(recipe, cluster, "node-[01-02]", "77", log_dir="/out/77/logs")


def _router(plan: JobPlan) -> list[ProcessSpec]:
    return [p for p in plan.processes if p.role == "router"]


def test_source_plans_clone_and_build_before_service(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    clone, build, service = _router(_plan(make_recipe, cluster))

    assert [p.name for p in (clone, build, service)] == [
        "service_router_clone",
        "service_router_build",
        "service_router",
    ]
    # Same phase, same node; the steps' order groups come before every service's.
    assert {p.phase for p in (clone, build, service)} == {"after_frontend"}
    assert clone.nodes == build.nodes == service.nodes == ("node-01",)
    assert clone.order < build.order < 0 <= service.order
    assert clone.oneshot and build.oneshot and not service.oneshot
    assert clone.critical and build.critical

    # The clone runs on the bare host (git from the host), into the job-owned folder, at the sha.
    assert clone.container is None
    assert clone.env == {"GIT_TERMINAL_PROMPT": "0"}
    script = clone.argv[2]
    assert clone.argv[:2] == ("bash", "-c")
    assert script.startswith(
        f"name=router url={GIT} want={SHA} dest=/out/77/logs/services/router/src "
        "log=/out/77/logs/service_router_clone.out\n"
    )
    assert 'clone --quiet --no-checkout --filter=blob:none -- "$url" "$dest.partial"' in script
    assert 'fetch --quiet origin -- "$want"; then ref=FETCH_HEAD' in script
    assert 'case "$got" in "$want"*) ;; *) fail "checked out $got, not the pinned sha"' in script
    assert 'sub=py; [ -d "$sub" ] || fail' in script
    assert "--container-image" not in clone.srun_argv

    # The build runs in the service's container, in the run directory, under coreutils timeout.
    assert build.container is not None and build.container == service.container
    build_script = build.argv[2]
    assert " dir=/logs/services/router/src/py " in build_script
    assert '\ncd "$dir" || fail' in build_script
    assert "\ntimeout --foreground --kill-after=10 300 pip install -e .\n" in build_script
    assert build.timeout_seconds is not None and build.timeout_seconds > 300
    assert build.env == service.env

    # The service starts from the checkout and is told where it is.
    assert service.argv == ("python3", "-m", "router", "--dir", "/logs/services/router/src/py")
    assert service.env["SERVICE_SOURCE_DIR"] == "/logs/services/router/src/py"
    assert service.preamble[0].endswith("&& cd /logs/services/router/src/py")
    assert "cd /logs/services/router/src/py" in service.srun_argv[-1]


def test_a_service_without_build_command_gets_only_the_clone(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    plan = _plan(make_recipe, cluster, build_command=None)
    assert [p.name for p in _router(plan)] == ["service_router_clone", "service_router"]


def test_an_unpinned_rev_is_fetched_by_name(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    plan = _plan(make_recipe, cluster, source={"git": GIT, "rev": "refs/pull/12/head"})
    script = _router(plan)[0].argv[2]
    assert " want=refs/pull/12/head " in script
    assert 'fetch --quiet origin -- "$want"; then ref=FETCH_HEAD' in script
    assert "is not pinned to a sha (srtctl apply pins it); fetching it by name" in script
    assert "not the pinned sha" not in script


def test_local_launcher_paths_are_the_host_log_dir(make_recipe: RecipeFactory) -> None:
    local = ClusterConfig(container_runtime="none", launcher="local")
    _, build, service = _router(_plan(make_recipe, local))
    assert build.container is None and build.srun_argv == ()
    assert " dir=/out/77/logs/services/router/src/py " in build.argv[2]
    assert service.env["SERVICE_SOURCE_DIR"] == "/out/77/logs/services/router/src/py"


def test_build_command_without_source_is_refused(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    with pytest.raises(PlanningError) as info:
        _plan(make_recipe, cluster, source=None)
    assert str(info.value) == (
        "$.services[router].build_command: runs in the service's source checkout, but the "
        "service has no source; add source: {git: <url>, rev: <tag or sha>}, or move the "
        "command into the service's preamble"
    )


def test_a_non_positive_build_timeout_is_refused(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    with pytest.raises(PlanningError) as info:
        _plan(make_recipe, cluster, build_timeout_seconds=0)
    assert str(info.value) == (
        "$.services[router].build_timeout_seconds: 0 is not a time limit; use a positive "
        "number of seconds (default 1800)"
    )


@pytest.mark.parametrize("path", ["/etc", "../other", "a/../../b"])
def test_a_source_path_outside_the_checkout_is_refused(
    make_recipe: RecipeFactory, cluster: ClusterConfig, path: str
) -> None:
    with pytest.raises(PlanningError) as info:
        _plan(make_recipe, cluster, source={"git": GIT, "rev": "v1", "path": path})
    assert str(info.value) == (
        f"$.services[router].source.path: {path!r} must be a relative directory inside the "
        "clone (no leading '/', no '..'); use e.g. 'router' or drop the key"
    )


def test_a_sha_that_is_not_hex_is_refused(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    with pytest.raises(PlanningError) as info:
        _plan(make_recipe, cluster, source={"git": GIT, "rev": "v1", "sha": "main"})
    assert str(info.value) == (
        "$.services[router].source.sha: 'main' is not a commit id (4 to 40 hex digits); remove "
        "it so srtctl apply pins source.rev, or write the full sha"
    )
