"""Scenario 10: container runtime ``pyxis``. slurm-lab's pyxis stub SPANK plugin accepts the
``--container-*`` flags and exports what each step was given as ``SLURMLAB_PYXIS_*`` to its task
(the step runs on the host). Every running step of a served job must have received exactly the
image and mounts its plan entry says."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from e2e_jobs import MODEL, RECIPES


def _mounts(container: dict) -> str:
    return ",".join(
        f"{m['host']}:{m['container']}" + (":ro" if m["readonly"] else "")
        for m in container["mounts"]
    )


def test_pyxis_steps_receive_the_image_and_mounts_of_the_plan(srt, slurm_cluster) -> None:
    assert slurm_cluster.pyxis_stub
    pyxis = srt.config_variant("pyxis", container_runtime="pyxis")
    # nothing is pulled or mounted: the stub runs each step on the host, where `python3` must be
    # the workspace interpreter (it has Dynamo) and the workers read the host model folder
    path = f"{Path(sys.executable).parent}:{os.environ['PATH']}"
    job = srt.apply_one(
        RECIPES / "pyxis.yaml",
        "--serve-only",
        "--set",
        f"roles.agg.args.model-path={MODEL}",
        env={"SRTSLURM_CONFIG": str(pyxis), "PATH": path},
    )
    srt.wait_for_stage(job, "serving")

    plan = json.loads((job.job_dir / "plan.json").read_text())
    contained = [p for p in plan["processes"] if p["container"] is not None]
    assert sorted(p["name"] for p in contained) == ["agg_0_node1", "frontend_0", "service_etcd"]
    for spec in contained:
        env = srt.task_environ(job, spec["name"])
        container = spec["container"]
        assert container["image"] == "nvcr.io#nvidia/ai-dynamo/vllm-runtime:0.6.1"
        assert env["SLURMLAB_PYXIS_CONTAINER_IMAGE"] == container["image"], spec["name"]
        assert env["SLURMLAB_PYXIS_CONTAINER_MOUNTS"] == _mounts(container), spec["name"]
        assert env["SLURMLAB_PYXIS_NO_CONTAINER_MOUNT_HOME"] == "1"
        assert env["SLURMLAB_PYXIS_NO_CONTAINER_ENTRYPOINT"] == "1"
        mounts = {m["container"]: m["host"] for m in container["mounts"]}
        assert mounts["/model"] == str(MODEL)
        assert mounts["/logs"] == str(job.job_dir / "logs")
        assert mounts["/scratch"] == "/tmp"  # the recipe's container_mounts

    srt.run(["scancel", job.job_id])
    status = srt.wait(job)
    assert status["status"] == "cancelled"
    assert srt.processes(job) == []
