"""A service with ``source`` runs from its pinned checkout: the planner's clone and build steps
(``services[].source``, ``build_command``, ``build_timeout_seconds``) executed by the supervisor
with the LocalLauncher against git repositories the tests make on disk.

Each recipe goes through the real pipeline (``load_recipe_text`` validates, ``plan_job`` plans);
the run keeps the service's own processes (its clone, build and service steps, exactly as
planned) and drops the engine workers, frontend and telemetry of the recipe, which have nothing
to do with the checkout and would bind fixed ports on a shared machine.
"""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import msgspec
from rt_plans import execute, wait_for_text

from srt_planner import plan_job
from srt_planner.plan import HealthGate, JobPlan
from srt_runtime.supervisor import Supervisor
from srt_schema import load_recipe_text
from srt_schema.cluster import ClusterConfig

LOCAL = ClusterConfig(container_runtime="none", launcher="local")

RECIPE = """\
schema: 2
name: service-source
model: {path: /models/tiny, container: none, precision: bf16}
resources: {gpus_per_node: 1}
engine: {type: mocker}
roles: {agg: {nodes: 1, workers: 1}}
frontend: {type: dynamo}
benchmark: {type: manual}
"""


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=srt", "-c", "user.email=srt@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.strip()


def _commit(work: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        path = work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    _git(work, "add", "-A")
    _git(work, "commit", "--quiet", "-m", message)
    return _git(work, "rev-parse", "HEAD")


def _repository(tmp_path: Path) -> tuple[Path, str, str]:
    """A working repository with two commits (``version.txt`` differs); tag v1 = the first."""
    work = tmp_path / "work"
    work.mkdir()
    _git(work, "init", "--quiet", "--initial-branch=trunk")
    first = _commit(work, {"version.txt": "first\n", "tools/tool.txt": "tool v1\n"}, "one")
    _git(work, "tag", "v1")
    second = _commit(work, {"version.txt": "second\n", "tools/tool.txt": "tool v2\n"}, "two")
    return work, first, second


def _bare(tmp_path: Path, work: Path) -> Path:
    bare = tmp_path / "repo.git"
    _git(tmp_path, "clone", "--quiet", "--bare", str(work), str(bare))
    return bare


def _service_yaml(git: str, sha: str | None, **extra: str) -> str:
    source = f"{{git: {git!r}, rev: v1" + (f", sha: {sha}" if sha else "") + "}"
    lines = [
        "services:",
        "  - name: app",
        "    terminal: true",
        "    inherit_discovery_env: false",
        f"    source: {source}",
    ]
    lines += [f"    {key}: {value}" for key, value in extra.items()]
    return RECIPE + "\n".join(lines) + "\n"


def _plan(text: str, job_dir: Path) -> JobPlan:
    (job,) = load_recipe_text(text, file="service-source.yaml", cluster=LOCAL)
    full = plan_job(job.recipe, LOCAL, "localhost", "4242", log_dir=str(job_dir / "logs"))
    own = tuple(p for p in full.processes if p.role == "app")
    return msgspec.structs.replace(full, processes=own, health=HealthGate(family="none", url=""))


def test_service_starts_from_its_pinned_checkout(tmp_path: Path, job_dir: Path) -> None:
    work, first, second = _repository(tmp_path)
    bare = _bare(tmp_path, work)
    report = 'echo "version=$(cat version.txt) $(cat built.txt) pwd=$PWD env=$SERVICE_SOURCE_DIR"'
    text = _service_yaml(
        f"file://{bare}",
        first,
        build_command=f"[bash, -c, {'echo built-at-$(git rev-parse HEAD) > built.txt'!r}]",
        command=f"[bash, -c, {report!r}]",
        build_timeout_seconds="60",
    )
    job_plan = _plan(text, job_dir)
    assert [p.name for p in job_plan.processes] == [
        "service_app_clone",
        "service_app_build",
        "service_app",
    ]

    run = execute(job_plan, job_dir)

    assert run.exit_code == 0, run.diagnosis
    checkout = job_dir / "logs" / "services" / "app" / "src"
    # The first commit, not the branch head (second) a plain clone would give.
    assert _git(checkout, "rev-parse", "HEAD") == first != second
    assert (checkout / "built.txt").read_text() == f"built-at-{first}\n"
    assert run.log("service_app.out") == (
        f"version=first built-at-{first} pwd={checkout} env={checkout}\n"
    )
    assert f"srt: service app: checked out {first} in {checkout}" in run.log(
        "service_app_clone.out"
    )
    assert f"srt: service app: built at {first} in {checkout}" in run.log("service_app_build.out")


def test_build_timeout_fails_the_job(tmp_path: Path, job_dir: Path) -> None:
    work, first, _ = _repository(tmp_path)
    bare = _bare(tmp_path, work)
    text = _service_yaml(
        f"file://{bare}",
        first,
        build_command="[sleep, '60']",
        command="[bash, -c, 'echo service ran']",
        build_timeout_seconds="1",
    )

    started = time.monotonic()
    run = execute(_plan(text, job_dir), job_dir)
    elapsed = time.monotonic() - started

    assert run.exit_code == 1
    assert elapsed < 40, elapsed  # hang guard: 40 x the 1 s build timeout, below the 60 s build
    build_log = job_dir / "logs" / "service_app_build.out"
    diagnosis = run.diagnosis.splitlines()
    assert "  what:   service_app_build" in diagnosis
    assert f"  log:    {build_log}" in diagnosis
    assert (
        f"    | srt: service app: build_command timed out after 1 s (build_timeout_seconds) "
        f"at {first} in {job_dir / 'logs/services/app/src'}; log: {build_log}"
    ) in diagnosis
    # The service never started: it would have run without its build.
    assert not (job_dir / "logs" / "service_app.out").exists()


def test_local_source_path_is_the_working_directory(tmp_path: Path, job_dir: Path) -> None:
    work, first, _ = _repository(tmp_path)
    # `git:` names a local folder (a working repository, no URL); `path:` a folder inside it.
    text = _service_yaml(
        str(work),
        None,
        command="[bash, -c, 'echo \"$(cat tool.txt) pwd=$PWD\"']",
    ).replace("rev: v1}", "rev: v1, path: tools}")

    run = execute(_plan(text, job_dir), job_dir)

    assert run.exit_code == 0, run.diagnosis
    tools = job_dir / "logs" / "services" / "app" / "src" / "tools"
    assert run.log("service_app.out") == f"tool v1 pwd={tools}\n"
    clone_log = run.log("service_app_clone.out")
    assert "source.rev v1 is not pinned to a sha (srtctl apply pins it)" in clone_log
    assert f"checked out {first} in" in clone_log


def test_a_clone_failure_names_the_service_and_the_commit(tmp_path: Path, job_dir: Path) -> None:
    _, first, _ = _repository(tmp_path)
    missing = f"file://{tmp_path / 'missing.git'}"
    text = _service_yaml(missing, first, command="[bash, -c, 'echo service ran']")

    run = execute(_plan(text, job_dir), job_dir)

    assert run.exit_code == 1
    clone_log = job_dir / "logs" / "service_app_clone.out"
    diagnosis = run.diagnosis.splitlines()
    assert "  what:   service_app_clone" in diagnosis
    assert (
        f"    | srt: service app: git clone failed ({missing} at {first}); log: {clone_log}"
    ) in diagnosis
    assert not (job_dir / "logs" / "services" / "app" / "src").exists()
    assert not (job_dir / "logs" / "service_app.out").exists()


def test_a_checkout_already_at_the_sha_is_kept(tmp_path: Path, job_dir: Path) -> None:
    work, first, _ = _repository(tmp_path)
    bare = _bare(tmp_path, work)
    text = _service_yaml(f"file://{bare}", first, command="[bash, -c, 'cat version.txt']")
    job_plan = _plan(text, job_dir)
    assert execute(job_plan, job_dir).exit_code == 0
    checkout = job_dir / "logs" / "services" / "app" / "src"
    (checkout / "marker").write_text("from the first run\n")

    run = execute(job_plan, job_dir)

    assert run.exit_code == 0, run.diagnosis
    assert (checkout / "marker").exists()
    assert f"srt: service app: checkout {checkout} is already at {first}; kept it" in run.log(
        "service_app_clone.out"
    )
    assert run.log("service_app.out") == "first\nfirst\n"


def test_a_stop_during_the_build_leaves_nothing_running(tmp_path: Path, job_dir: Path) -> None:
    work, first, _ = _repository(tmp_path)
    bare = _bare(tmp_path, work)
    text = _service_yaml(
        f"file://{bare}",
        first,
        build_command="[bash, -c, 'echo building; sleep 60']",
        command="[bash, -c, 'echo service ran']",
        build_timeout_seconds="120",
    )
    build_log = job_dir / "logs" / "service_app_build.out"

    def stop_when_building(sup: Supervisor, stage: str, status: str) -> None:
        if stage == "after_frontend" and status == "running":

            def stop() -> None:
                wait_for_text(build_log, "building", timeout=30)
                sup.request_stop("received SIGTERM")

            threading.Thread(target=stop, daemon=True).start()

    started = time.monotonic()
    run = execute(_plan(text, job_dir), job_dir, on_status=stop_when_building)

    assert run.exit_code == 1
    # hang guard: the stop comes once the build runs; the build alone would take 60 s
    assert time.monotonic() - started < 50
    assert run.stages[-1] == ("cleanup", "cancelled")
    # The autouse fixture fails the test if the build's `sleep` outlived the job.
