"""``$SRT_HWMON_ROOT`` points the ACPI CPU power reader at another hwmon tree when the config keeps
the default root (how the e2e tier gives a node without sensors a fake tree); an explicit root
wins."""

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

from srt_telemetry.config import CpuPowerConfig
from srt_telemetry.cpu_scrape import parse_cpu_exporter
from srt_telemetry.cpu_sources import DEFAULT_HWMON_ROOT, open_source
from srt_telemetry.testing.hwmon import write_fake_hwmon


def test_the_environment_replaces_the_default_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_fake_hwmon(tmp_path / "fake", sockets=2, watts=100.0)
    monkeypatch.setenv("SRT_HWMON_ROOT", str(tmp_path / "fake"))
    reader = open_source("acpi", DEFAULT_HWMON_ROOT, order=("acpi",))
    assert reader.hwmon_root == tmp_path / "fake"


def test_an_explicit_root_wins_over_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_fake_hwmon(tmp_path / "mine", sockets=1, watts=50.0)
    monkeypatch.setenv("SRT_HWMON_ROOT", str(tmp_path / "missing"))
    reader = open_source("acpi", tmp_path / "mine", order=("acpi",))
    assert reader.hwmon_root == tmp_path / "mine"


# --- the real commands --------------------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "srt_telemetry", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.slow
def test_cpu_power_collect_reads_the_tree_the_environment_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spawn: Any
) -> None:
    """A config with the default root (as the planner writes it) on a machine without hwmon:
    `$SRT_HWMON_ROOT` makes the real collector read the fake tree, and says so."""
    tree = write_fake_hwmon(tmp_path / "fake", sockets=2, watts=100.0, socket_offset_w=5.0)
    monkeypatch.setenv("SRT_HWMON_ROOT", str(tree.root))  # inherited by the processes
    out = tmp_path / "cpu_power"
    cfg = tmp_path / "cpu.json"
    config = CpuPowerConfig(
        output_dir=str(out), expected_nodes=("n1",), source="acpi", startup_timeout_seconds=10.0
    )
    assert config.hwmon_root == str(DEFAULT_HWMON_ROOT)
    cfg.write_bytes(msgspec.json.encode(config))
    assert _cli("cpu-power", "wait-ready", "--config", str(cfg), "--init").returncode == 0
    proc = spawn("cpu-power", "collect", "--config", str(cfg), "--hostname", "n1")
    ready = _cli("cpu-power", "wait-ready", "--config", str(cfg))
    assert ready.returncode == 0, ready.stderr
    time.sleep(0.4)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    meta = json.loads((out / "nodes" / "n1.metadata.json").read_text())
    assert (meta["hwmon_root"], meta["source"]) == (str(tree.root), "acpi")
    with (out / "nodes" / "n1.csv").open() as fh:
        totals = {r["total_power_w"] for r in csv.DictReader(fh)}
    assert totals == {repr(tree.node_total_w)} and tree.node_total_w == 205.0


@pytest.mark.slow
def test_cpu_power_exporter_uses_the_environment_unless_a_root_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spawn: Any
) -> None:
    tree = write_fake_hwmon(tmp_path / "fake", sockets=1, watts=87.5)
    monkeypatch.setenv("SRT_HWMON_ROOT", str(tree.root))
    proc = spawn("cpu-power", "exporter", "--port", "0", "--bind", "127.0.0.1", "--source", "acpi")
    assert proc.stdout is not None
    address = proc.stdout.readline().split()[-1]  # "listening on 127.0.0.1:PORT"
    mode, rows, total = parse_cpu_exporter(httpx.get(f"http://{address}/metrics").text)
    assert (mode, len(rows), total) == ("acpi", 3, 87.5)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=20)
    assert proc.returncode == 0
    # an explicit non-default root wins: this one has no sensors, so the mandatory source fails
    (tmp_path / "empty").mkdir()
    res = _cli(
        "cpu-power", "exporter", "--port", "0", "--bind", "127.0.0.1", "--source", "acpi",
        "--hwmon-root", str(tmp_path / "empty"),
    )  # fmt: skip
    assert res.returncode == 2
    assert str(tmp_path / "empty") in res.stderr and str(tree.root) not in res.stderr
