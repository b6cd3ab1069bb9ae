"""Scenario 9: the Tachometer scraper captures Debian's node exporter, started on every node of
a three-node job, into ``final.parquet``; every exporter was scraped at its own node's address
(``http://nodeN:9101``), so each one answered from its own node, and its rows went through the
``node_exporter`` filter (renamed metrics, a ``mode`` column, the ``hostname`` column)."""

from __future__ import annotations

import json

import polars as pl
from e2e_jobs import RECIPES


def test_the_scraper_captures_the_node_exporter_of_every_worker_node(srt) -> None:
    job = srt.apply_one(RECIPES / "telemetry.yaml")
    status = srt.wait(job)
    assert (status["status"], status["exit_code"]) == ("completed", 0)

    plan = json.loads((job.job_dir / "plan.json").read_text())
    worker_nodes = sorted(
        {n for p in plan["processes"] if p["kind"] == "worker" for n in p["nodes"]}
    )
    assert worker_nodes == ["node1", "node2", "node3"]
    config = json.loads((job.job_dir / "logs" / "tachometer_config.json").read_text())
    urls = {e["name"]: e["url"] for e in config["endpoints"]}
    for node in worker_nodes:
        assert urls[f"node-exporter_{node}"] == f"http://{node}:9101/metrics"

    frame = pl.read_parquet(job.job_dir / "logs" / "tachometer" / "final.parquet")
    exporters = frame.filter(pl.col("scraper_endpoint").str.starts_with("node-exporter_"))
    for node in worker_nodes:
        mine = exporters.filter(pl.col("scraper_endpoint") == f"node-exporter_{node}")
        assert set(mine["hostname"].unique()) == {node}
        # The node_exporter filter: the node_ prefix dropped, CPU seconds as per-mode aggregates.
        memory = mine.filter(pl.col("metric_name") == "memory_MemTotal_bytes")
        assert memory.height > 0, node
        assert memory["metric_value"].min() > 0
        cpu = mine.filter(pl.col("metric_name").str.starts_with("cpu_time_"))
        assert cpu.height > 0, node
        assert set(cpu.filter(pl.col("mode") != "")["mode"].unique()) >= {"idle", "user"}, node
    summary = (job.job_dir / "logs" / "tachometer.out").read_text().splitlines()[-1]
    scrapes = json.loads(summary)["scrapes"]
    assert all(scrapes[f"node-exporter_{node}"] > 0 for node in worker_nodes)
