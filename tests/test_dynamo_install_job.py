"""A local-launcher job installs Dynamo from a git source with a patch (srt_planner.dynamo_install):
`srtctl apply --local` runs the quickstart (Dynamo frontend + mocker workers, the real programs)
with ``dynamo.source: {git: <test repository>, rev: feature, patches: [<patch>]}``; before its
program every Dynamo step installs the patched tree once, into the job's own folder, and the job
then runs and benchmarks as usual. The test repository's package is ``srt_demo_pkg``, not
``dynamo``, so the real Dynamo still serves.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "packages" / "srt-runtime" / "tests"))  # `dynamo_tree`

from dynamo_tree import PACKAGE, PATCH, git, make_repository, offline_env  # noqa: E402

pytestmark = pytest.mark.slow


def test_a_local_job_installs_the_patched_git_source_for_its_dynamo_steps(tmp_path: Path) -> None:
    srtctl = shutil.which("srtctl")
    assert srtctl is not None, "srtctl is not installed in this environment (make sync)"
    repo = make_repository(tmp_path)
    patch = tmp_path / "add-symbol.patch"
    patch.write_text(PATCH)
    recipe = yaml.safe_load((ROOT / "examples" / "quickstart.yaml").read_text())
    recipe["dynamo"] = {"source": {"git": str(repo), "rev": "feature", "patches": [str(patch)]}}
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe, sort_keys=False))
    out = tmp_path / "out"
    done = subprocess.run(
        [srtctl, "apply", "--local", "-f", str(path), "-o", str(out)],
        cwd=ROOT,
        env=offline_env(tmp_path, os.environ["PATH"]),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [job_dir] = [p for p in out.iterdir() if p.is_dir() and p.name.startswith("local-")]
    logs = job_dir / "logs"
    sha = git(repo, "rev-parse", "feature")
    # srtctl apply pinned the branch to its commit; the job installed exactly that.
    config = yaml.safe_load((job_dir / "config.yaml").read_text())
    assert config["dynamo"]["source"]["sha"] == sha
    record = json.loads((logs / "dynamo_install_node-01.json").read_text())
    assert record["commit"] == sha
    assert record["patches"][0]["sha256"] == hashlib.sha256(PATCH.encode()).hexdigest()
    # Once for the node, although two workers and the frontend ran the preamble.
    log = (logs / "dynamo_install_node-01.log").read_text()
    assert log.count(": installing git ") == 1
    assert log.count("already installed") == 2
    lock = yaml.safe_load((job_dir / "recipe.lock.yaml").read_text())["lock"]
    assert lock["dynamo_install"]["node-01"]["commit"] == sha
    # Every Dynamo step imports from the job's folder first, where the patched package is.
    plan = json.loads((job_dir / "plan.json").read_text())
    site = logs / "dynamo_install" / "node-01" / "site"
    steps = [p for p in plan["processes"] if p["kind"] in ("worker", "frontend")]
    assert len(steps) == 3
    for step in steps:
        assert f'export PYTHONPATH={site}"${{PYTHONPATH:+:$PYTHONPATH}}"' in step["preamble"]
    imported = subprocess.run(
        [sys.executable, "-c", f"from {PACKAGE} import VALUE, PATCHED; print(VALUE, PATCHED)"],
        env={**offline_env(tmp_path), "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert imported.stdout.strip() == "feature patched", imported.stderr
    # The interpreter srt runs from was not touched.
    assert not list(Path(sys.prefix).glob(f"lib/python*/site-packages/{PACKAGE}"))
