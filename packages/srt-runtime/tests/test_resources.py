"""The resource record and its CPU allocation warning."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
from rt_plans import fake, plan, spec

from srt_runtime.resources import build_resource_snapshot, write_resource_snapshot


def test_enough_cpus_and_too_few(tmp_path: Path) -> None:
    job_plan = plan(
        spec("prefill_0", fake(), gpus=(0, 1, 2, 3)),
        spec("decode_0", fake(), gpus=(4, 5, 6, 7)),
        spec("decode_1", fake(), gpus=(0, 1), node="node-02"),
    )
    env = {"SLURM_JOB_CPUS_PER_NODE": "4(x2)", "SLURM_CPUS_ON_NODE": "4"}

    ok = build_resource_snapshot(job_plan, "node-02", env, {3, 1, 2, 0})
    assert (ok.worker_gpus, ok.affinity, ok.warning) == (2, (0, 1, 2, 3), None)

    short = build_resource_snapshot(job_plan, "node-01", env, range(4))
    assert short.warning == (
        "CPU ALLOCATION WARNING: node-01 runs 8 worker GPUs on 4 CPUs; ask Slurm for at least "
        "one CPU per GPU (e.g. sbatch_directives cpus-per-task)"
    )
    path = write_resource_snapshot(tmp_path, short)
    assert msgspec.json.decode(path.read_bytes(), type=type(short)) == short
    assert json.loads(path.read_text())["job_cpus_per_node"] == "4(x2)"
