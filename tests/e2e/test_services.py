"""Scenario 7: generic services: one on the head node behind a TCP readiness probe that has to
wait for it, one on a one-node pool of its own; both ready before the benchmark starts."""

from __future__ import annotations

import json
from datetime import datetime

from e2e_jobs import RECIPES


def _at(sweep: str, needle: str) -> datetime:
    (line,) = [line for line in sweep.splitlines() if needle in line]
    return datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f")


def test_generic_services_with_a_tcp_probe_and_a_pool_of_their_own(srt) -> None:
    job = srt.apply_one(RECIPES / "services.yaml")
    status = srt.wait(job)
    assert (status["status"], status["exit_code"]) == ("completed", 0)

    plan = json.loads((job.job_dir / "plan.json").read_text())
    assert plan["nodes"] == ["node1", "node2"]
    where = {p["name"]: p["nodes"] for p in plan["processes"]}
    assert where["service_web"] == ["node1"]
    assert where["service_pooled"] == ["node2"]
    assert not [n for n, nodes in where.items() if n != "service_pooled" and "node2" in nodes]

    sweep = srt.sweep_log(job)
    web_ready = _at(sweep, "service_web is ready (accept TCP connections on node1:9555)")
    # the probe waited for the 2 s the service takes to listen
    assert (web_ready - _at(sweep, "Starting service_web on node1")).total_seconds() >= 2
    # only something listening on node2's own address passes this probe
    pooled_ready = _at(sweep, "service_pooled is ready (accept TCP connections on node2:9556)")
    bench = _at(sweep, "Starting benchmark on node1")
    assert web_ready <= bench and pooled_ready <= bench
    logs = job.job_dir / "logs"
    assert "port 9555" in (logs / "service_web.out").read_text()
    assert "port 9556" in (logs / "service_pooled.out").read_text()
