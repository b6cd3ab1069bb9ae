"""``frontend.num_additional_frontends`` on a local job (docs/planner.md#frontend-layout): every
frontend asked for runs, round-robin over the worker nodes besides the head node (more than
there are nodes: several on a node, a port each), behind nginx on the head node, and the
benchmark goes through them; nothing is capped."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "examples" / "quickstart.yaml"
#: Three worker nodes (simulated on this host): nginx on node-01, frontends on node-02 and node-03.
THREE_NODES = ["--set", "roles.agg.nodes=3", "--set", "roles.agg.workers=3"]
THREE_NODES += ["--set", "frontend.enable_multiple_frontends=true"]


def _srtctl() -> str:
    srtctl = shutil.which("srtctl")
    assert srtctl is not None, "srtctl is not installed in this environment (make sync)"
    return srtctl


@pytest.mark.slow
def test_every_additional_frontend_runs_behind_nginx(tmp_path: Path) -> None:
    argv = [_srtctl(), "apply", "--local", "-f", str(QUICKSTART), "-o", str(tmp_path)]
    # 1 + 3 frontends on the 2 nodes besides the head node: two each
    argv += [*THREE_NODES, "--set", "frontend.num_additional_frontends=3"]
    argv += ["--set", "benchmark.concurrencies=[4]"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=400, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [job_dir] = [p for p in tmp_path.iterdir() if p.is_dir() and p.name.startswith("local-")]
    status = json.loads((job_dir / "status.json").read_text())
    assert (status["status"], status["exit_code"]) == ("completed", 0)
    events = [
        json.loads(line) for line in (job_dir / "status_events.jsonl").read_text().splitlines()
    ]
    ready = {
        (e["process"], e["node"])
        for e in events
        if e.get("event") == "process"
        and e["what"] == "ready"
        and e["kind"] in ("frontend", "proxy")
    }
    assert ready == {
        ("nginx", "node-01"),
        ("frontend_0", "node-02"),
        ("frontend_1", "node-03"),
        ("frontend_2", "node-02"),
        ("frontend_3", "node-03"),
    }
    conf = (job_dir / "logs" / "nginx.conf").read_text()
    assert conf.count("server 127.0.0.1:818") == 4
    rollup = json.loads((job_dir / "logs" / "benchmark-rollup.json").read_text())
    assert rollup["runs"] and all(r["completed_requests"] > 0 for r in rollup["runs"])
