"""CPU power against the fake hwmon tree, all real processes: `python -m srt_telemetry.testing
fake-hwmon` writes the kernel's acpi_power_meter layout, `srt-telemetry cpu-power collect` (leg
A) and `cpu-power exporter` (leg B) read it, and a rewrite of the tree's values shows up in both
while they run."""

from __future__ import annotations

import csv
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from srt_telemetry.config import CpuPowerConfig, ExporterConfig
from srt_telemetry.cpu_scrape import parse_cpu_exporter

pytestmark = pytest.mark.slow


def _tool(*args: str) -> dict[str, Any]:
    res = subprocess.run(
        [sys.executable, "-m", "srt_telemetry.testing", "fake-hwmon", *args],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    out: dict[str, Any] = json.loads(res.stdout)
    return out


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "srt_telemetry", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_leg_a_collects_what_the_tree_says(tmp_path: Path, spawn: Any) -> None:
    """Two nodes, each with its own tree (2 sockets); n1's power is raised mid-run."""
    n1 = _tool("--root", str(tmp_path / "n1"), "--watts", "100", "--socket-offset-w", "10")
    n2 = _tool("--root", str(tmp_path / "n2"), "--watts", "80", "--sockets", "1")
    assert (n1["node_total_w"], n2["node_total_w"]) == (210.0, 80.0)
    out = tmp_path / "logs" / "cpu_power"
    configs = {}
    for host in ("n1", "n2"):
        cfg = CpuPowerConfig(
            output_dir=str(out),
            expected_nodes=("n1", "n2"),
            source="acpi",
            sample_interval_seconds=0.1,
            startup_timeout_seconds=10.0,
            required=True,
            hwmon_root=str(tmp_path / host),
        )
        configs[host] = tmp_path / f"cpu_{host}.json"
        configs[host].write_bytes(msgspec.json.encode(cfg))
    assert _cli("cpu-power", "wait-ready", "--config", str(configs["n1"]), "--init").returncode == 0
    procs = [
        spawn("cpu-power", "collect", "--config", str(configs[h]), "--hostname", h)
        for h in ("n1", "n2")
    ]
    ready = _cli("cpu-power", "wait-ready", "--config", str(configs["n1"]))
    assert ready.returncode == 0, ready.stderr
    time.sleep(0.5)
    rewrite_start = time.time()
    _tool("--root", str(tmp_path / "n1"), "--watts", "150", "--socket-offset-w", "10")
    rewrite_end = time.time()
    time.sleep(0.5)
    for p in procs:
        p.send_signal(signal.SIGTERM)
    for p in procs:
        _, stderr = p.communicate(timeout=30)
        assert p.returncode == 0, stderr
    fin = _cli("cpu-power", "finalize", "--config", str(configs["n1"]))
    assert fin.returncode == 0, fin.stdout + fin.stderr
    m = json.loads((out / "manifest.json").read_text())
    assert (m["status"], m["publication_valid"], m["reason_codes"]) == ("complete", True, [])
    assert m["observed_nodes"] == ["n1", "n2"]
    channels = m["node_metadata"]["n1"]["channels"]
    assert [(c["kind"], c["socket"]) for c in channels] == [
        ("total", "0"),
        ("cpu_rail", "0"),
        ("soc", "0"),
        ("total", "1"),
        ("cpu_rail", "1"),
        ("soc", "1"),
    ]
    with (out / "samples.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    # one entry per n1 sample (the node total repeats on each socket's row of a sample)
    n1_samples = {
        float(r["timestamp_unix"]): float(r["total_power_w"]) for r in rows if r["hostname"] == "n1"
    }
    n1_totals = [n1_samples[t] for t in sorted(n1_samples)]
    # 100 + 110 W before the rewrite, 150 + 160 W after it; the tree is rewritten file by file,
    # so a sample may mix old and new channels, but only one read while the rewrite ran (a sample is
    # stamped after its reads; 0.1 s allows for a slow read on a loaded machine)
    assert n1_totals == sorted(n1_totals) and n1_totals[0] == 210.0 and n1_totals[-1] == 310.0
    assert n1_totals.count(210.0) >= 3 and n1_totals.count(310.0) >= 3
    mixed = [t for t, w in n1_samples.items() if w not in (210.0, 310.0)]
    assert all(rewrite_start <= t <= rewrite_end + 0.1 for t in mixed), (
        mixed, rewrite_start, rewrite_end,
    )  # fmt: skip
    socket1 = [(r["power_w"], r["cpu_rail_w"], r["soc_w"]) for r in rows if r["socket_id"] == "1"]
    assert socket1.count(("110.0", "66.0", "22.0")) >= 3
    assert socket1.count(("160.0", "96.0", "32.0")) >= 3
    assert {r["total_power_w"] for r in rows if r["hostname"] == "n2"} == {"80.0"}


def test_leg_b_exporter_serves_the_tree(tmp_path: Path, spawn: Any) -> None:
    root = tmp_path / "hwmon"
    _tool("--root", str(root), "--watts", "120", "--layout", "acpi")
    cfg = tmp_path / "exporter.json"
    cfg.write_bytes(msgspec.json.encode(ExporterConfig(refresh_interval_seconds=0.2)))
    proc = spawn(
        "cpu-power", "exporter", "--config", str(cfg), "--port", "0", "--bind", "127.0.0.1",
        "--hwmon-root", str(root),
    )  # fmt: skip
    assert proc.stdout is not None
    address = proc.stdout.readline().split()[-1]  # "listening on 127.0.0.1:PORT"
    url = f"http://{address}/metrics"
    mode, rows, total = parse_cpu_exporter(httpx.get(url, timeout=5.0).text)
    assert (mode, len(rows), total) == ("acpi", 6, 240.0)
    assert sorted(r.sensor for r in rows) == [f"hwmon{k}/power1" for k in range(1, 7)]
    _tool("--root", str(root), "--watts", "75.25")
    deadline = time.monotonic() + 5.0
    while total != 150.5 and time.monotonic() < deadline:
        time.sleep(0.1)
        _, _, total = parse_cpu_exporter(httpx.get(url, timeout=5.0).text)
    assert total == 150.5
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=20)
    assert proc.returncode == 0
