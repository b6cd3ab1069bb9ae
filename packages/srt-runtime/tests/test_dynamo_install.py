"""The Dynamo install script (``srt_planner.dynamo_install``) run for real: the planner renders
the plan of a recipe whose ``dynamo.source`` is a git repository the test makes on disk (a tiny
Python package, not named ``dynamo`` so it never shadows the Dynamo the jobs run), and the test
runs the plan's own worker preamble in bash with the plan's script written where the runtime
writes it. No network: the packages build with an in-tree PEP 517 backend that needs nothing,
and pip / uv run with their indexes switched off.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from srt_planner import plan_job
from srt_planner.dynamo_install import DYNAMO_GIT_URL, INSTALL_SCRIPT
from srt_planner.plan import JobPlan, ProcessSpec
from srt_runtime.lockfile import read_dynamo_installs
from srt_runtime.postrun import record_results
from srt_schema import load_recipe_text
from srt_schema.cluster import ClusterConfig

sys.path.insert(0, str(Path(__file__).resolve().parent))  # `dynamo_tree` (a unique name)

from dynamo_tree import (
    BAD_PATCH,
    PACKAGE,
    PATCH,
    RUNTIME,
    git,
    make_repository,
    make_wheels,
    offline_env,
    upstream,
)

RECIPE = """\
schema: 2
name: dynamo-install
model: {path: /models/tiny, container: none, precision: bf16}
resources: {gpus_per_node: 1}
engine: {type: mocker}
roles: {agg: {nodes: 1, workers: 1}}
frontend: {type: dynamo}
benchmark: {type: manual}
"""


def plan_for(
    tmp_path: Path,
    source: dict[str, Any] | None,
    *,
    python: str = sys.executable,
    top_of_tree: bool = False,
) -> tuple[JobPlan, Path]:
    log_dir = tmp_path / "logs"
    log_dir.mkdir(exist_ok=True)
    dynamo: dict[str, Any] = {"top_of_tree": True} if top_of_tree else {"source": source}
    text = RECIPE + (yaml.safe_dump({"dynamo": dynamo}) if source or top_of_tree else "")
    (loaded,) = load_recipe_text(text, file="dynamo-install.yaml")
    cluster = ClusterConfig(container_runtime="none", launcher="local", runtime_python=python)
    plan = plan_job(loaded.recipe, cluster, ["node-01"], "4242", log_dir=str(log_dir))
    return plan, log_dir


def worker(plan: JobPlan) -> ProcessSpec:
    (spec,) = [p for p in plan.processes if p.kind == "worker"]
    return spec


def run_preamble(
    plan: JobPlan, log_dir: Path, check: str, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """The worker's own preamble (the plan's script written as the runtime writes it), then
    ``check`` in the same shell, as the worker's program would run."""
    (script,) = [f for f in plan.files if f.path == INSTALL_SCRIPT]
    (log_dir / INSTALL_SCRIPT).write_text(script.content)
    spec = worker(plan)
    command = " && ".join([*spec.preamble, check])
    return subprocess.run(
        ["bash", "-c", command],
        cwd=log_dir.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _import(python: str, *names: str) -> str:
    return f"{python} -c " + repr(
        "; ".join(f"import {n}" for n in names)
        + "; print("
        + ", ".join(f"{n}.__name__" for n in names)
        + f"); from {PACKAGE} import VALUE, PATCHED; print(VALUE, PATCHED)"
    )


def test_a_git_branch_with_a_patch_is_installed_into_the_job_folder(tmp_path: Path) -> None:
    repo = make_repository(tmp_path)
    (tmp_path / "add-symbol.patch").write_text(PATCH)
    patch = str(tmp_path / "add-symbol.patch")
    plan, log_dir = plan_for(tmp_path, {"git": str(repo), "rev": "feature", "patches": [patch]})
    site = log_dir / "dynamo_install" / "node-01" / "site"
    spec = worker(plan)
    assert f'export PYTHONPATH={site}"${{PYTHONPATH:+:$PYTHONPATH}}"' in spec.preamble
    done = run_preamble(plan, log_dir, _import(sys.executable, PACKAGE), offline_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [PACKAGE, "feature patched"]
    assert (site / PACKAGE / "__init__.py").is_file()

    record = json.loads((log_dir / "dynamo_install_node-01.json").read_text())
    assert record["kind"] == "git"
    assert record["mode"] == "prefix"
    assert record["commit"] == git(repo, "rev-parse", "feature")
    assert record["patches"] == [
        {
            "path": patch,
            "resolved": patch,
            "sha256": hashlib.sha256(PATCH.encode()).hexdigest(),
        }
    ]
    assert record["installed"] == {"srt-demo-pkg": "0.1.0"}
    assert record["version"] == "0.1.0"
    assert record["target"] == str(site)
    # srt's own interpreter was not touched.
    untouched = subprocess.run(
        [sys.executable, "-c", f"import {PACKAGE}"],
        check=False,
        capture_output=True,
        env=offline_env(tmp_path),
    )
    assert untouched.returncode != 0
    # The checkout was the job's own and is gone once installed.
    assert not list(tmp_path.glob("srt_dynamo_src.*"))

    again = run_preamble(plan, log_dir, "true", offline_env(tmp_path))
    assert again.returncode == 0, again.stderr
    log = (log_dir / "dynamo_install_node-01.log").read_text()
    assert log.count("srt: dynamo install on node-01: installing ") == 1
    assert "already installed" in log.splitlines()[-1]


def test_the_pinned_sha_wins_and_relative_patches_come_from_the_configs_folder(
    tmp_path: Path,
) -> None:
    repo = make_repository(tmp_path)
    configs = tmp_path / "configs" / "patches"
    configs.mkdir(parents=True)
    (configs / "add-symbol.patch").write_text(PATCH)
    sha = git(repo, "rev-parse", "feature")
    # `rev` names trunk, but the pinned sha (what srtctl apply writes) is the feature commit.
    source = {"git": str(repo), "rev": "trunk", "sha": sha, "patches": ["add-symbol.patch"]}
    plan, log_dir = plan_for(tmp_path, source)
    done = run_preamble(plan, log_dir, _import(sys.executable, PACKAGE), offline_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "feature patched"
    record = json.loads((log_dir / "dynamo_install_node-01.json").read_text())
    assert record["commit"] == sha
    assert record["patches"][0]["resolved"] == str(configs / "add-symbol.patch")


def test_a_patch_that_does_not_apply_fails_with_its_name(tmp_path: Path) -> None:
    repo = make_repository(tmp_path)
    (tmp_path / "good.patch").write_text(PATCH)
    (tmp_path / "stale.patch").write_text(BAD_PATCH)
    patches = [str(tmp_path / "good.patch"), str(tmp_path / "stale.patch")]
    plan, log_dir = plan_for(tmp_path, {"git": str(repo), "rev": "feature", "patches": patches})
    done = run_preamble(plan, log_dir, "echo the worker started", offline_env(tmp_path))
    assert done.returncode == 1
    assert "the worker started" not in done.stdout
    sha = git(repo, "rev-parse", "feature")
    last = done.stderr.splitlines()[-1]
    assert last == (
        f"srt: dynamo install on node-01 failed: patch {patches[1]} does not apply to {repo} "
        f"at {sha} (log: {log_dir}/dynamo_install_node-01.log)"
    )
    # The log's tail is on stderr: git's own reason, after the first patch was applied.
    assert f"applied patch {patches[0]}" in done.stderr
    assert "patch failed: srt_demo_pkg/__init__.py:1" in done.stderr
    assert not (log_dir / "dynamo_install_node-01.json").exists()


def test_a_broken_build_fails_and_shows_the_build_log(tmp_path: Path) -> None:
    repo = make_repository(tmp_path, broken=True)
    plan, log_dir = plan_for(tmp_path, {"git": str(repo), "rev": "feature"})
    done = run_preamble(plan, log_dir, "echo the worker started", offline_env(tmp_path))
    assert done.returncode == 1
    assert "the worker started" not in done.stdout
    assert done.stderr.splitlines()[-1].startswith(
        f"srt: dynamo install on node-01 failed: installing git {repo}@feature failed (log: "
    )
    assert "srt-test: this tree does not build (BROKEN)" in done.stderr
    log = (log_dir / "dynamo_install_node-01.log").read_text()
    assert "srt-test: this tree does not build (BROKEN)" in log
    # A failed install leaves no sentinel: the next step tries again.
    assert not (log_dir / "dynamo_install" / "node-01" / "complete").exists()


def test_the_runtime_bindings_are_built_first_and_satisfy_the_root(tmp_path: Path) -> None:
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not on PATH (the bindings' check needs it)")
    repo = make_repository(tmp_path, bindings=True)
    (tmp_path / "add-symbol.patch").write_text(PATCH)
    source = {"git": str(repo), "rev": "feature", "patches": [str(tmp_path / "add-symbol.patch")]}
    plan, log_dir = plan_for(tmp_path, source)
    check = _import(sys.executable, PACKAGE, RUNTIME)
    done = run_preamble(plan, log_dir, check, offline_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"{PACKAGE} {RUNTIME}", "feature patched"]
    record = json.loads((log_dir / "dynamo_install_node-01.json").read_text())
    assert record["installed"] == {"srt-demo-runtime": "0.1.0", "srt-demo-pkg": "0.1.0"}
    log = (log_dir / "dynamo_install_node-01.log").read_text()
    assert "building the runtime bindings in " in log


def test_bindings_without_cargo_fail_before_building(tmp_path: Path) -> None:
    repo = make_repository(tmp_path, bindings=True)
    path = os.pathsep.join(
        d for d in os.environ["PATH"].split(os.pathsep) if not (Path(d) / "cargo").exists()
    )
    plan, log_dir = plan_for(tmp_path, {"git": str(repo), "rev": "feature"})
    done = run_preamble(plan, log_dir, "true", offline_env(tmp_path, path))
    assert done.returncode == 1
    sha = git(repo, "rev-parse", "feature")
    assert done.stderr.splitlines()[-1] == (
        f"srt: dynamo install on node-01 failed: {repo} at {sha} has the Rust runtime bindings "
        "(lib/bindings/python, a maturin project), which need cargo to build, and cargo is not "
        "on PATH; use an image with a Rust toolchain, or install a release (dynamo.source.pypi "
        f"or wheel) (log: {log_dir}/dynamo_install_node-01.log)"
    )
    assert (
        "building the runtime bindings" not in (log_dir / "dynamo_install_node-01.log").read_text()
    )


def _pip_python() -> str | None:
    """An interpreter on PATH, other than this one, with pip (the install then uses pip)."""
    own = Path(sys.executable).resolve()
    for folder in os.environ["PATH"].split(os.pathsep):
        found = Path(folder) / "python3"
        if not found.is_file() or found.resolve() == own or "/.venv/" in str(found):
            continue
        ok = subprocess.run(
            [str(found), "-m", "pip", "--version"], capture_output=True, check=False
        )
        if ok.returncode == 0:
            return str(found)
    return None


def test_pip_installs_into_the_job_folder_too(tmp_path: Path) -> None:
    python = _pip_python()
    if python is None:
        pytest.skip("no interpreter with pip on PATH")
    repo = make_repository(tmp_path)
    (tmp_path / "add-symbol.patch").write_text(PATCH)
    source = {"git": str(repo), "rev": "feature", "patches": [str(tmp_path / "add-symbol.patch")]}
    plan, log_dir = plan_for(tmp_path, source, python=python)
    done = run_preamble(plan, log_dir, _import(python, PACKAGE), offline_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "feature patched"
    assert (
        " -m pip install --no-input --target "
        in (log_dir / "dynamo_install_node-01.log").read_text()
    )


def test_the_install_records_go_into_the_lockfile(tmp_path: Path) -> None:
    repo = make_repository(tmp_path)
    (tmp_path / "add-symbol.patch").write_text(PATCH)
    source = {"git": str(repo), "rev": "feature", "patches": [str(tmp_path / "add-symbol.patch")]}
    plan, log_dir = plan_for(tmp_path, source)
    assert run_preamble(plan, log_dir, "true", offline_env(tmp_path)).returncode == 0
    job_dir = tmp_path
    (job_dir / "config.yaml").write_text(RECIPE)
    assert read_dynamo_installs(log_dir) == {
        "node-01": json.loads((log_dir / "dynamo_install_node-01.json").read_text())
    }
    record_results(job_dir, log_dir, log=logging.getLogger("test"))
    lock = yaml.safe_load((job_dir / "recipe.lock.yaml").read_text())["lock"]
    installed = lock["dynamo_install"]["node-01"]
    assert installed["commit"] == git(repo, "rev-parse", "feature")
    assert installed["patches"][0]["sha256"] == hashlib.sha256(PATCH.encode()).hexdigest()
    assert installed["kind"] == "git"
    assert installed["version"] == "0.1.0"


def test_top_of_tree_installs_the_upstream_head(tmp_path: Path) -> None:
    repo = make_repository(tmp_path)
    plan, log_dir = plan_for(tmp_path, None, top_of_tree=True)
    check = f"{sys.executable} -c 'from {PACKAGE} import VALUE; print(VALUE)'"
    done = run_preamble(plan, log_dir, check, upstream(offline_env(tmp_path), repo))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["trunk"]
    record = json.loads((log_dir / "dynamo_install_node-01.json").read_text())
    assert record["kind"] == "top_of_tree"
    assert record["repo"] == DYNAMO_GIT_URL
    assert record["commit"] == git(repo, "rev-parse", "trunk")


def test_rev_alone_is_fetched_from_the_upstream_repository(tmp_path: Path) -> None:
    repo = make_repository(tmp_path)
    plan, log_dir = plan_for(tmp_path, {"rev": "feature"})
    check = f"{sys.executable} -c 'from {PACKAGE} import VALUE; print(VALUE)'"
    done = run_preamble(plan, log_dir, check, upstream(offline_env(tmp_path), repo))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["feature"]
    record = json.loads((log_dir / "dynamo_install_node-01.json").read_text())
    assert record["commit"] == git(repo, "rev-parse", "feature")


def _from_wheelhouse(env: dict[str, str], wheels: Path) -> dict[str, str]:
    """The package index is the folder of test wheels (pip and uv alike)."""
    return {**env, "UV_NO_INDEX": "1", "UV_FIND_LINKS": str(wheels), "PIP_FIND_LINKS": str(wheels)}


_FAKE = "srt_fake_ai_dynamo"
_FAKE_CHECK = (
    f"{sys.executable} -c 'import {_FAKE}, {_FAKE}_runtime; "
    f"print({_FAKE}.DIST, {_FAKE}_runtime.DIST)'"
)


def test_a_pypi_release_installs_both_distributions(tmp_path: Path) -> None:
    wheels = make_wheels(tmp_path, "9.9.9")
    plan, log_dir = plan_for(tmp_path, {"pypi": "9.9.9"})
    env = _from_wheelhouse(offline_env(tmp_path), wheels)
    done = run_preamble(plan, log_dir, _FAKE_CHECK, env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["ai-dynamo ai-dynamo-runtime"]
    record = json.loads((log_dir / "dynamo_install_node-01.json").read_text())
    assert record["kind"] == "pypi"
    assert record["installed"] == {"ai-dynamo-runtime": "9.9.9", "ai-dynamo": "9.9.9"}
    assert record["version"] == "9.9.9"


def test_a_nightly_wheel_version_allows_pre_releases(tmp_path: Path) -> None:
    wheels = make_wheels(tmp_path, "9.9.9.dev20260426")
    plan, log_dir = plan_for(tmp_path, {"wheel": "9.9.9.dev20260426"})
    env = _from_wheelhouse(offline_env(tmp_path), wheels)
    done = run_preamble(plan, log_dir, _FAKE_CHECK, env)
    assert done.returncode == 0, done.stderr
    record = json.loads((log_dir / "dynamo_install_node-01.json").read_text())
    assert record["kind"] == "wheel"
    assert record["version"] == "9.9.9.dev20260426"


def test_a_wheel_file_is_installed(tmp_path: Path) -> None:
    wheels = make_wheels(tmp_path, "9.9.9")
    (wheel,) = wheels.glob("ai_dynamo-*.whl")
    plan, log_dir = plan_for(tmp_path, {"wheel": str(wheel)})
    check = f"{sys.executable} -c 'import {_FAKE}; print({_FAKE}.DIST)'"
    done = run_preamble(plan, log_dir, check, offline_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["ai-dynamo"]
    record = json.loads((log_dir / "dynamo_install_node-01.json").read_text())
    assert record["installed"] == {"ai_dynamo": "9.9.9"}


def test_without_a_source_nothing_is_installed_off_container(tmp_path: Path) -> None:
    plan, _ = plan_for(tmp_path, None)
    assert INSTALL_SCRIPT not in {f.path for f in plan.files}
    assert not any("srt_dynamo_install" in line for line in worker(plan).preamble)
