"""``services[].source`` as a user runs it: ``srtctl apply --local`` pins ``source.rev`` to its
commit, the job clones that commit into its own folder, runs ``build_command`` there, and the
service runs from the checkout, next to a real Dynamo mocker worker and frontend.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


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


def _recipe(model: Path, git: str) -> str:
    report = 'echo "version=$(cat version.txt) $(cat built.txt) pwd=$PWD"'
    doc = {
        "schema": 2,
        "name": "service-source",
        "model": {"path": str(model), "container": "none", "precision": "bf16"},
        "resources": {"gpus_per_node": 1},
        "engine": {"type": "mocker", "speedup_ratio": 10},
        "roles": {"agg": {"nodes": 1, "workers": 1}},
        "frontend": {"type": "dynamo", "enable_multiple_frontends": False},
        "benchmark": {"type": "manual"},
        "health_check": {"max_attempts": 60, "interval_seconds": 1},
        "services": [
            {
                "name": "app",
                "command": ["bash", "-c", report],
                "terminal": True,
                "source": {"git": git, "rev": "v1"},
                "build_command": ["bash", "-c", "echo built-at-$(git rev-parse HEAD) > built.txt"],
                "build_timeout_seconds": 120,
            }
        ],
    }
    return yaml.safe_dump(doc, sort_keys=False)


def test_apply_pins_clones_builds_and_runs_the_service_from_its_checkout(tmp_path: Path) -> None:
    srtctl = shutil.which("srtctl")
    assert srtctl is not None, "srtctl is not installed in this environment (make sync)"
    work = tmp_path / "work"
    work.mkdir()
    _git(work, "init", "--quiet", "--initial-branch=trunk")
    (work / "version.txt").write_text("first\n")
    _git(work, "add", "-A")
    _git(work, "commit", "--quiet", "-m", "one")
    _git(work, "tag", "v1")
    first = _git(work, "rev-parse", "HEAD")
    (work / "version.txt").write_text("second\n")
    _git(work, "commit", "--quiet", "-am", "two")
    bare = tmp_path / "repo.git"
    _git(tmp_path, "clone", "--quiet", "--bare", str(work), str(bare))
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(_recipe(ROOT / "examples" / "models" / "tiny-word", f"file://{bare}"))
    out = tmp_path / "out"

    done = subprocess.run(
        [srtctl, "apply", "--local", "-f", str(recipe), "-o", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [job_dir] = [p for p in out.iterdir() if p.is_dir()]
    # apply pinned the rev into the job's recipe...
    config = yaml.safe_load((job_dir / "config.yaml").read_text())
    assert config["services"][0]["source"]["sha"] == first
    # ...and the service ran from a checkout of exactly that commit, after its build.
    checkout = job_dir / "logs" / "services" / "app" / "src"
    assert _git(checkout, "rev-parse", "HEAD") == first
    assert (job_dir / "logs" / "service_app.out").read_text() == (
        f"version=first built-at-{first} pwd={checkout}\n"
    )
