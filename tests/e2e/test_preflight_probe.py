"""``srtctl preflight`` probes, on a slurm-lab node, the engine, frontend and router packages the
job's runtime has installed, says each version and the flag catalog it is checked against, and
checks the flags with it (issue 30; docs/flag-check.md#probing).

The probe is one short ``srun`` step per runtime, started as the job's steps are: the runtime
interpreter of srtslurm.yaml (container runtime none), or ``python3`` in the job's image (pyxis;
the lab's pyxis stub runs the step on the node, where PATH leads to the workspace interpreter).
What is installed there is the workspace's: Dynamo (``ai-dynamo``) and sglang-router, no SGLang.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import yaml
from e2e_jobs import MODEL, RECIPES

SRTCTL = Path(sys.executable).parent / "srtctl"
DYNAMO = metadata.version("ai-dynamo")
ROUTER = metadata.version("sglang-router")
PROBED = re.compile(r"probed in (?:image (?P<image>\S+), )?(?P<python>\S+) on (?P<node>[^)\s]+)\)")


def _preflight(srt, recipe: Path, *args: str, env: dict[str, str] | None = None):
    cmd = [str(SRTCTL), "preflight", "-f", str(recipe), "--set", f"model.path={MODEL}", *args]
    # hang guard: one srun step per runtime on an idle 3-node lab takes about a second; the
    # probe's own bound (srun --immediate=60) is far below this
    return subprocess.run(
        cmd, env=srt.env(env), capture_output=True, text=True, timeout=300, check=False
    )


def _versions(stdout: str) -> list[str]:
    return [
        line.split(": versions: ", 1)[1] for line in stdout.splitlines() if ": versions: " in line
    ]


def _same_interpreter(reported: str) -> bool:
    """The node ran this workspace's interpreter (``python3`` may be reported by another name)."""
    return Path(reported).resolve() == Path(sys.executable).resolve()


def test_preflight_probes_the_runtime_interpreter_on_a_node(srt, slurm_cluster) -> None:
    result = _preflight(srt, RECIPES / "agg.yaml")
    assert result.returncode == 0, result.stdout + result.stderr
    (line,) = _versions(result.stdout)
    assert line.startswith(f"dynamo-frontend {DYNAMO} (probed in ")
    assert line.endswith(f"), catalog dynamo-frontend {DYNAMO} (exact)")
    found = PROBED.search(line)
    assert found is not None, line
    assert found["node"] in slurm_cluster.nodes  # an srun step on a node, not this host
    assert _same_interpreter(found["python"]), line


def test_preflight_says_what_is_not_installed_and_checks_the_router_flags(
    srt, slurm_cluster, tmp_path
) -> None:
    recipe = tmp_path / "router.yaml"
    document = {
        "schema": 2,
        "name": "e2e-probe-router",
        "model": {"path": "tiny-word", "container": "none", "precision": "bf16"},
        "resources": {"gpus_per_node": 4},
        "engine": {"type": "sglang"},
        "roles": {"agg": {"nodes": 1, "workers": 2, "gpus": 2}},
        "frontend": {"type": "sglang-router", "args": {"policy": "round_robin"}},
        "benchmark": {"type": "manual"},
    }
    recipe.write_text(yaml.safe_dump(document, sort_keys=False))
    result = _preflight(srt, recipe)
    # SGLang is not installed in the runtime interpreter: the worker module is missing (fatal)
    assert result.returncode == 4, result.stdout + result.stderr
    assert "cannot import 'sglang.launch_server'" in result.stdout
    engine, router = _versions(result.stdout)
    assert engine.startswith("sglang: version unresolved (not installed; probed in ")
    assert engine.endswith("), nearest catalog sglang 0.5.23")
    assert router.startswith(f"sglang-router {ROUTER} (probed in ")
    assert router.endswith(f"), catalog sglang-router {ROUTER} (exact)")
    for line in (engine, router):
        found = PROBED.search(line)
        assert found is not None and found["node"] in slurm_cluster.nodes, line
    # a router flag the installed sglang-router does not know is refused with its version
    document["frontend"]["args"]["chat-routing"] = True
    recipe.write_text(yaml.safe_dump(document, sort_keys=False))
    refused = _preflight(srt, recipe)
    assert refused.returncode == 4
    (line,) = [ln for ln in refused.stdout.splitlines() if "$.frontend.args.chat-routing" in ln]
    assert f"--chat-routing is not a flag of sglang-router {ROUTER} (probed in " in line


def test_preflight_probes_the_image_of_a_pyxis_job(srt, slurm_cluster) -> None:
    pyxis = srt.config_variant("pyxis-probe", container_runtime="pyxis")
    # the stub runs the step on the node: `python3` there is the workspace interpreter
    path = f"{Path(sys.executable).parent}:{os.environ['PATH']}"
    env = {"SRTSLURM_CONFIG": str(pyxis), "PATH": path}
    image = "nvcr.io#nvidia/ai-dynamo/vllm-runtime:0.6.1"
    unprobed = _preflight(srt, RECIPES / "pyxis.yaml", "--no-probe", env=env)
    assert unprobed.returncode == 0, unprobed.stdout + unprobed.stderr
    # the tag says 0.6.1, which has no catalog
    assert _versions(unprobed.stdout) == [
        f"dynamo-frontend 0.6.1 (image {image}), nearest catalog dynamo-frontend 0.8.0"
    ]
    probed = _preflight(srt, RECIPES / "pyxis.yaml", env=env)
    assert probed.returncode == 0, probed.stdout + probed.stderr
    (line,) = _versions(probed.stdout)
    # what is installed in the image wins over its tag
    assert line.startswith(f"dynamo-frontend {DYNAMO} (probed in image {image}, ")
    assert line.endswith(f"), catalog dynamo-frontend {DYNAMO} (exact)")
    found = PROBED.search(line)
    assert found is not None and found["image"] == image, line
    assert found["node"] in slurm_cluster.nodes
    assert _same_interpreter(found["python"]), line
