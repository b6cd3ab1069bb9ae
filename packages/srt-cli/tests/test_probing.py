"""``srtctl preflight``'s version probe (srt_cli.probing): runtimes of a plan, the probe run by a
real interpreter, and its result fed to the flag check. The installed engine is a unit-test
double: a ``sglang-0.5.8.dist-info`` folder (and an empty ``sglang.launch_server`` module) on
the probed interpreter's PYTHONPATH; the slurm-lab e2e test probes real packages on a node."""

from __future__ import annotations

import socket
import sys
from importlib import metadata
from pathlib import Path

import yaml
from cli_testkit import Invoke

from srt_cli.probing import (
    PROBE_SCRIPT,
    Runtime,
    SrunProbe,
    parse_probe,
    probe_command,
    run_probe,
    runtimes_of,
)
from srt_planner import plan_job
from srt_schema.cluster import ClusterConfig
from srt_schema.load import load_recipe_text

PYTHON = sys.executable
ROUTER = metadata.version("sglang-router")  # installed in the workspace (docs/flag-check.md)


def _fake_sglang(folder: Path, version: str) -> Path:
    """A distribution ``sglang`` of ``version``: metadata and an empty launch_server module."""
    info = folder / f"sglang-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: sglang\nVersion: {version}\n")
    (folder / "sglang").mkdir()
    (folder / "sglang" / "__init__.py").write_text("")
    (folder / "sglang" / "launch_server.py").write_text("raise SystemExit('not a real engine')\n")
    return folder


def _recipe(model: Path, args: dict[str, object]) -> str:
    return yaml.safe_dump(
        {
            "schema": 2,
            "name": "probed",
            "model": {"path": str(model), "container": "none", "precision": "bf16"},
            "resources": {"gpus_per_node": 4},
            "engine": {"type": "sglang"},
            "roles": {"agg": {"nodes": 1, "workers": 2, "gpus": 2, "args": args}},
            "frontend": {"type": "sglang-router"},
            "benchmark": {"type": "manual"},
        },
        sort_keys=False,
    )


def test_runtimes_are_the_interpreter_or_image_of_each_catalogued_program(tmp_path: Path) -> None:
    text = _recipe(tmp_path, {})
    local = ClusterConfig(container_runtime="none", runtime_python=PYTHON)
    (job,) = load_recipe_text(text, file="r.yaml", cluster=local)
    plan = plan_job(job.recipe, local, ("node-01",), "1")
    # python3 of a job without containers runs as the runtime interpreter
    assert runtimes_of(plan, PYTHON) == {Runtime(None, PYTHON): ["sglang", "sglang-router"]}
    pyxis = ClusterConfig(default_account="a", default_partition="p")
    image = "lmsysorg/sglang:v0.5.8-cu130"
    pinned = text.replace("container: none", f"container: {image}")
    (job,) = load_recipe_text(pinned, file="r.yaml", cluster=pyxis)
    plan = plan_job(job.recipe, pyxis, ("node-01",), "1")
    assert runtimes_of(plan, PYTHON) == {Runtime(image, "python3"): ["sglang", "sglang-router"]}


def test_an_image_is_probed_in_one_srun_step_with_the_job_s_container_flags() -> None:
    runtime = Runtime("nvcr.io#nvidia/ai-dynamo/sglang-runtime:0.8.0", "python3")
    srun = SrunProbe(srun="/usr/bin/srun", partition="batch", account="acct")
    assert probe_command(runtime, ["ai-dynamo"], srun) == [
        "/usr/bin/srun",
        "--nodes=1",
        "--ntasks=1",
        "--immediate=60",
        "--time=5",
        "--job-name=srt-preflight-probe",
        "--partition=batch",
        "--account=acct",
        "--container-image",
        "nvcr.io#nvidia/ai-dynamo/sglang-runtime:0.8.0",
        "--no-container-entrypoint",
        "--no-container-mount-home",
        "python3",
        "-c",
        PROBE_SCRIPT,
        "ai-dynamo",
    ]
    assert probe_command(Runtime(None, PYTHON), ["smg"], None) == [
        PYTHON,
        "-c",
        PROBE_SCRIPT,
        "smg",
    ]


def test_a_real_interpreter_reports_installed_and_missing_packages(tmp_path: Path) -> None:
    site = _fake_sglang(tmp_path / "site", "0.5.8")
    probe = run_probe(
        Runtime(None, PYTHON),
        ["sglang", "vllm", "sglang-router"],
        srun=None,
        environ={"PYTHONPATH": str(site)},
    )
    assert probe.error is None
    assert probe.versions == {"sglang": "0.5.8", "vllm": None, "sglang-router": ROUTER}
    assert probe.node == socket.gethostname()
    assert probe.where == f"probed in {probe.python} on {probe.node}"
    installed = probe.installed()
    assert installed.versions == {"sglang": "0.5.8", "sglang-router": ROUTER}


def test_a_probe_that_cannot_run_says_why(tmp_path: Path) -> None:
    image = Runtime("lmsysorg/sglang:v0.5.8", "python3")
    assert run_probe(image, ["sglang"], srun=None, environ={}).error == (
        "an image is probed in an srun step, and srun is not on PATH"
    )
    missing = SrunProbe(srun=str(tmp_path / "no-srun"))
    error = run_probe(image, ["sglang"], srun=missing, environ={}).error
    assert error is not None and error.startswith(f"could not start {tmp_path / 'no-srun'}: ")
    said = tmp_path / "srun"
    said.write_text("#!/bin/sh\necho 'srun: error: Unable to allocate resources' >&2\nexit 1\n")
    said.chmod(0o755)
    assert run_probe(image, ["sglang"], srun=SrunProbe(srun=str(said)), environ={}).error == (
        f"{said} exited 1: srun: error: Unable to allocate resources"
    )
    assert parse_probe(image, "noise\nSRT-PROBE {not json\n") is None


def _preflight(invoke: Invoke, tmp_path: Path, args: dict[str, object], *extra: str) -> list[str]:
    (tmp_path / "work" / "srtslurm.yaml").write_text(
        yaml.safe_dump({"container_runtime": "none", "launcher": "local", "runtime_python": PYTHON})
    )
    model = tmp_path / "model"
    model.mkdir(exist_ok=True)
    recipe = tmp_path / "probed.yaml"
    recipe.write_text(_recipe(model, args))
    site = tmp_path / "site"
    if not site.exists():
        _fake_sglang(site, "0.5.8")
    result = invoke("preflight", "-f", str(recipe), *extra, env={"PYTHONPATH": str(site)})
    prefix = f"  {recipe}: "
    return [f"exit {result.exit_code}"] + [
        line.removeprefix(prefix) for line in result.stdout.splitlines()[1:]
    ]


def test_preflight_checks_the_flags_against_the_probed_version(
    invoke: Invoke, tmp_path: Path
) -> None:
    where = f"probed in {PYTHON} on {socket.gethostname()}"
    # --attn-cp-size is a flag of SGLang 0.5.11 and later, not of the 0.5.8 installed
    lines = _preflight(invoke, tmp_path, {"attn-cp-size": 1})
    assert lines == [
        "exit 4",
        "$.roles.agg.args.attn-cp-size: --attn-cp-size is not a flag of sglang 0.5.8 "
        f"({where}); it exists in sglang 0.5.11, sglang 0.5.12, sglang 0.5.19, sglang 0.5.23: "
        "use a matching image or drop it",
        f"versions: sglang 0.5.8 ({where}), catalog sglang 0.5.8 (exact)",
        f"versions: sglang-router {ROUTER} ({where}), catalog sglang-router {ROUTER} (exact)",
    ]
    # without the probe the version is unresolved (runtime_python is another interpreter than
    # srtctl's, as far as srtctl knows): the same flag is only a warning
    lines = _preflight(invoke, tmp_path, {"attn-cp-size": 1}, "--no-probe")
    assert lines[0] == "exit 0"
    assert lines[-2:] == [
        "versions: sglang: version unresolved (the host's install), nearest catalog sglang 0.5.23",
        "versions: sglang-router: version unresolved (the host's install), nearest catalog "
        f"sglang-router {ROUTER}",
    ]
    # a flag 0.5.8 has passes against the probed version
    assert _preflight(invoke, tmp_path, {"cuda-graph-max-bs": 8})[:2] == [
        "exit 0",
        f"versions: sglang 0.5.8 ({where}), catalog sglang 0.5.8 (exact)",
    ]
