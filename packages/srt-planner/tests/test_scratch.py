"""The job's scratch (``PlanContext.scratch_dir``): NATS JetStream's store (its folder is made
afresh by the step), etcd's data and the tachometer's buffer go into the job's log folder
(``/logs/scratch`` in containers), never a predictable shared ``/tmp/srt-<job_id>``; the plan
names the folder (``JobPlan.scratch``) for the runtime to create private and remove."""

from __future__ import annotations

import json

from planner_testkit import RecipeFactory

from srt_planner import plan_job
from srt_planner.plan import JobPlan
from srt_schema.cluster import ClusterConfig

LOCAL = ClusterConfig(launcher="local", runtime_python="/venv")
SLURM = ClusterConfig(default_account="a", default_partition="p")


def _scratch_uses(plan: JobPlan) -> tuple[str, str | None, str]:
    """(NATS store, etcd data argument (None without etcd), tachometer local_dir) of a plan."""
    files = {f.path: f.content for f in plan.files}
    nats = next(p for p in plan.processes if p.name.startswith("service_nats"))
    assert f"{nats.preamble[-1].split()[2]}" in files["nats.conf"]
    etcd = next((p for p in plan.processes if p.name.startswith("service_etcd")), None)
    data = None if etcd is None else etcd.argv[etcd.argv.index("--data-dir") + 1]
    local_dir = json.loads(files["tachometer_config.json"])["local_dir"]
    return " ".join(nats.preamble), data, local_dir


def test_local_jobs_keep_their_scratch_in_their_own_log_folder(
    make_recipe: RecipeFactory,
) -> None:
    recipe = make_recipe(
        roles={"agg": {"nodes": 1, "workers": 1}}, dynamo={"request_plane": "nats"}
    )
    logs = "/runs/a/local-20261205T120000Z/logs"
    nats, etcd, tachometer = _scratch_uses(
        plan_job(recipe, LOCAL, "node-01", "local-20261205T120000Z", log_dir=logs)
    )
    assert nats == f"rm -rf {logs}/scratch/nats && mkdir -p {logs}/scratch/nats"
    assert etcd is None  # local discovery needs no etcd
    assert tachometer == f"{logs}/scratch/tachometer"
    # the same job id in another output folder: nothing shared
    other = plan_job(recipe, LOCAL, "node-01", "local-20261205T120000Z", log_dir="/runs/b/logs")
    assert not set(_scratch_uses(other)) & {nats, tachometer}


def test_cluster_jobs_keep_their_scratch_in_their_job_folder(make_recipe: RecipeFactory) -> None:
    """Issue 32 item 6: not ``/tmp/srt-<job_id>`` (predictable, shared, never removed)."""
    recipe = make_recipe(
        roles={"agg": {"nodes": 1, "workers": 1}}, dynamo={"request_plane": "nats"}
    )
    plan = plan_job(recipe, SLURM, "node-01", "4321")
    nats, etcd, tachometer = _scratch_uses(plan)
    assert nats == "rm -rf /logs/scratch/nats && mkdir -p /logs/scratch/nats"
    assert (etcd, tachometer) == ("/logs/scratch/etcd", "/logs/scratch/tachometer")
    assert plan.scratch == "scratch"
    assert "/tmp/" not in json.dumps([p.argv for p in plan.processes])
