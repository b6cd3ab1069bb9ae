from __future__ import annotations

import polars as pl
from telemetry_testkit import DATA

from srt_telemetry.config import ScrapeEndpoint
from srt_telemetry.promtext import parse_text
from srt_telemetry.rows import build_frame, extra_columns


def _frame(ep: ScrapeEndpoint, name: str) -> pl.DataFrame:
    return build_frame(
        parse_text((DATA / name).read_text()),
        ep,
        extra_columns([ep]),
        timestamp_ns=1_000,
        time_since_start=0.5,
    )


def test_backend_histogram_rows() -> None:
    ep = ScrapeEndpoint(
        name="backend_decode0_rank0",
        url="http://x",
        filter="backend",
        node_metadata={"node": "n1", "endpoint": "decode"},
    )
    df = _frame(ep, "backend-histogram.txt")
    assert extra_columns([ep]) == ("gpu", "hostname", "mode", "worker_role")
    buckets = df.filter(pl.col("metric_name").str.contains("_bucket"))
    assert buckets.select(
        "metric_name",
        "metric_value",
        "histogram_bucket_lower",
        "histogram_bucket_upper",
        "histogram_sum",
        "histogram_count",
    ).rows() == [
        ('dynamo_frontend_time_to_first_token_seconds_bucket{model="m"}', 3.0, 0.0, 0.1, 2.25, 9.0),
        ('dynamo_frontend_time_to_first_token_seconds_bucket{model="m"}', 7.0, 0.1, 0.5, 2.25, 9.0),
        (
            'dynamo_frontend_time_to_first_token_seconds_bucket{model="m"}',
            9.0,
            0.5,
            None,
            2.25,
            9.0,
        ),
    ]
    names = df["metric_name"].to_list()
    # histogram totals ride on the bucket rows; summary totals stay rows
    assert not any(n.startswith("dynamo_frontend_time_to_first_token_seconds_sum") for n in names)
    assert "rpc_duration_seconds_sum" in names
    assert 'dynamo_frontend_requests_total{model="m",status="ok"}' in names
    assert set(df["hostname"]) == {"n1"} and set(df["worker_role"]) == {"decode"}
    assert set(df["timestamp_ns"]) == {1_000} and set(df["time_since_start"]) == {0.5}


def test_passthrough_keeps_histogram_totals() -> None:
    ep = ScrapeEndpoint(name="svc", url="http://x")
    names = _frame(ep, "backend-histogram.txt")["metric_name"].to_list()
    assert 'dynamo_frontend_time_to_first_token_seconds_sum{model="m"}' in names


def test_dcgm_filter_renames_and_gpu_metadata() -> None:
    ep = ScrapeEndpoint(
        name="dcgm_n1",
        url="http://x",
        filter="dcgm",
        node_metadata={"hostname": "n1"},
        gpu_metadata={"1": {"worker_role": "decode", "worker_index": "0"}},
    )
    df = _frame(ep, "dcgm-excerpt.txt")
    power = df.filter(pl.col("metric_name") == "gpu_power").sort("gpu")
    assert power.select("gpu", "metric_value", "worker_role", "hostname").rows() == [
        ("0", 170.582, "", "n1"),
        ("1", 171.187, "decode", "n1"),
        ("2", 165.866, "", "n1"),
        ("3", 180.378, "", "n1"),
    ]
    assert set(df["metric_name"]) == {"gpu_power", "gpu_util", "dev_pcie_replay_counter"}


def test_node_exporter_cpu_aggregates(node_text: str) -> None:
    ep = ScrapeEndpoint(name="node_n1", url="http://x", filter="node_exporter")
    df = build_frame(
        parse_text(node_text), ep, extra_columns([ep]), timestamp_ns=1, time_since_start=0.0
    )
    p = parse_text(node_text)
    idle = sorted(
        v
        for n, lab, v in zip(p.names, p.labels, p.values, strict=False)
        if n == "node_cpu_seconds_total" and dict(lab)["mode"] == "idle"
    )
    got = dict(
        df.filter(pl.col("mode") == "idle", pl.col("metric_name").str.starts_with("cpu_time_"))
        .select("metric_name", "metric_value")
        .rows()
    )
    assert got["cpu_time_min"] == idle[0] and got["cpu_time_max"] == idle[-1]
    assert idle[0] <= got["cpu_time_p10"] <= got["cpu_time_p90"] <= idle[-1]
    assert not df.filter(pl.col("metric_name").str.starts_with("node_")).height
    assert 'cpu_online{cpu="0"}' in set(df["metric_name"])
