"""Scenarios 2 and 3: disaggregated prefill + decode on three nodes with etcd and NATS (Debian's
binaries) as services and the request plane over NATS; then several Dynamo frontends behind
nginx."""

from __future__ import annotations

import json
import re

from e2e_jobs import RECIPES

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _plan(job) -> dict:
    return json.loads((job.job_dir / "plan.json").read_text())


def _where(plan: dict) -> dict[str, list[str]]:
    return {p["name"]: p["nodes"] for p in plan["processes"]}


def _completed_everything(srt, job, concurrency: int) -> None:
    status = srt.wait(job)
    assert (status["status"], status["exit_code"]) == ("completed", 0)
    rollup = json.loads((job.job_dir / "logs" / "benchmark-rollup.json").read_text())
    (run,) = rollup["runs"]
    assert run["concurrency"] == concurrency
    assert run["completed_requests"] == 10 * concurrency
    assert run["throughput_toks"] > 0
    # a healthy run is judged valid with no reason (srt-bench validity)
    assert rollup["validity"]["verdict"] == "valid", rollup["validity"]
    assert not rollup["validity"].get("reasons"), rollup["validity"]


def test_disaggregated_workers_on_three_nodes_serve_over_nats(srt, slurm_cluster) -> None:
    job = srt.apply_one(RECIPES / "disagg.yaml")
    _completed_everything(srt, job, 4)

    where = _where(_plan(job))
    assert where["service_etcd"] == where["service_nats"] == ["node1"]
    assert where["frontend_0"] == ["node1"]
    assert where["prefill_0_node1"] == ["node1"]
    assert where["decode_0_node2"] == ["node2"]
    assert where["decode_1_node3"] == ["node3"]
    assert "nginx" not in where
    # Every request is decoded by a worker on node2 or node3: all of them crossed nodes. The
    # frontend on node1 used NATS and reached the workers at their nodes' own addresses.
    frontend = ANSI.sub("", (job.job_dir / "logs" / "node1_frontend_0.out").read_text())
    assert "NATS request plane" in frontend
    for node in ("node2", "node3"):
        assert f"tcp://{slurm_cluster.addresses[node]}:" in frontend, node
    for log in ("node2_decode_w0.out", "node3_decode_w1.out", "service_nats.out"):
        assert (job.job_dir / "logs" / log).stat().st_size > 0, log


def test_several_frontends_behind_nginx(srt) -> None:
    job = srt.apply_one(
        RECIPES / "disagg.yaml",
        "--set",
        "frontend.enable_multiple_frontends=true",
        "--set",
        "frontend.num_additional_frontends=1",
    )
    _completed_everything(srt, job, 4)

    plan = _plan(job)
    where = _where(plan)
    assert where["nginx"] == ["node1"]
    frontends = sorted(n for n in where if n.startswith("frontend_"))
    assert frontends == ["frontend_0", "frontend_1"]
    assert {where[f][0] for f in frontends} == {"node2", "node3"}
    conf = (job.job_dir / "logs" / "nginx.conf").read_text()
    for f in frontends:
        (spec,) = [p for p in plan["processes"] if p["name"] == f]
        assert f"{spec['nodes'][0]}:{spec['ports']['http']}" in conf
    sweep = srt.sweep_log(job)
    for f in frontends:
        assert f"{f} is ready (accept TCP connections on {where[f][0]}:8180)" in sweep
    assert "nginx is ready (accept TCP connections on node1:8000)" in sweep
    # the client went through nginx, which round-robins over both frontends
    bench = (job.job_dir / "logs" / "benchmark.out").read_text()
    assert "against http://node1:8000," in bench
