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
from telemetry_fakes.hwmon import make_hwmon, set_power
from telemetry_testkit import DATA, free_port, wait_http

from srt_telemetry.config import CpuPowerConfig
from srt_telemetry.cpu_collect import CPU_HEADER, build_rows
from srt_telemetry.cpu_exporter import CONTENT_TYPE, render_metrics
from srt_telemetry.cpu_sources import AcpiReader, ChannelReading, classify
from srt_telemetry.promtext import parse_text


@pytest.mark.parametrize(
    ("label", "kind"),
    [
        ("Grace Power Socket 0", "total"),
        ("Total Power [in uW] socket 1", "total"),
        ("Total Input Power", "total"),
        ("CPU Rail Power", "cpu_rail"),
        ("CPU Power Socket 1", "cpu_rail"),
        ("SoC Rail", "soc"),
        ("SysIO Power Socket 0", "soc"),
        ("DRAM Power", "dram"),
        ("Fan", "other"),
    ],
)
def test_classify(label: str, kind: str) -> None:
    assert classify(label) == kind


def test_acpi_reader(tmp_path: Path) -> None:
    root = make_hwmon(tmp_path / "hwmon")
    reader = AcpiReader(root)
    assert reader.usable
    assert [c.sensor for c in reader.channels] == [
        "hwmon3/power1",
        "hwmon3/power2",
        "hwmon3/power3",
        "hwmon4/power1",
        "hwmon4/power2",
        "hwmon4/power3",
    ]
    set_power(root, "hwmon4", "power3", 0)  # zero readings are left out
    got = reader.read()
    assert [(r.sensor, r.kind, r.socket, r.watts) for r in got] == [
        ("hwmon3/power1", "total", "0", 98.029),
        ("hwmon3/power2", "cpu_rail", "0", 61.25),
        ("hwmon3/power3", "soc", "0", 20.125),
        ("hwmon4/power1", "total", "1", 101.5),
        ("hwmon4/power2", "cpu_rail", "1", 63.0),
    ]
    assert not AcpiReader(
        make_hwmon(tmp_path / "rails", {"hwmon1": [("power1", "CPU Rail", 5)]})
    ).usable


def test_render_matches_recorded_exporter_text(tmp_path: Path) -> None:
    body = render_metrics(AcpiReader(make_hwmon(tmp_path / "h")).read())
    assert body == (DATA / "cpu-power-exporter.txt").read_text()


def test_rows_v4() -> None:
    r = [
        ChannelReading("hwmon3/power1", "total", "0", "", 98.0),
        ChannelReading("hwmon3/power2", "cpu_rail", "0", "", 60.0),
        ChannelReading("hwmon4/power1", "total", "1", "", 100.5),
    ]
    rows = build_rows(r, hostname="n1", source="acpi", ts=1780000000.5)
    assert [dict(zip(CPU_HEADER, row, strict=True)) | {"timestamp_local": ""} for row in rows] == [
        {
            "schema_version": "4",
            "timestamp_unix": "1780000000.5",
            "timestamp_local": "",
            "hostname": "n1",
            "source": "acpi",
            "sensor": "hwmon3/power1",
            "socket_id": "0",
            "power_w": "98.0",
            "cpu_rail_w": "60.0",
            "soc_w": "",
            "dram_w": "",
            "total_power_w": "198.5",
            "cpu_util_total": "",
            "cpu_util_user": "",
            "cpu_util_nice": "",
            "cpu_util_sys": "",
            "cpu_util_irq": "",
        },
        {
            "schema_version": "4",
            "timestamp_unix": "1780000000.5",
            "timestamp_local": "",
            "hostname": "n1",
            "source": "acpi",
            "sensor": "hwmon4/power1",
            "socket_id": "1",
            "power_w": "100.5",
            "cpu_rail_w": "",
            "soc_w": "",
            "dram_w": "",
            "total_power_w": "198.5",
            "cpu_util_total": "",
            "cpu_util_user": "",
            "cpu_util_nice": "",
            "cpu_util_sys": "",
            "cpu_util_irq": "",
        },
    ]
    # a socket without its total: no node total
    partial = build_rows(
        [*r[:2], ChannelReading("hwmon4/power2", "cpu_rail", "1", "", 3.0)],
        hostname="n1",
        source="acpi",
        ts=1.0,
    )
    assert [row[CPU_HEADER.index("total_power_w")] for row in partial] == ["", ""]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "srt_telemetry", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _config(tmp_path: Path, hwmon: Path, **kw: object) -> Path:
    cfg = CpuPowerConfig(
        output_dir=str(tmp_path / "logs" / "cpu_power"),
        expected_nodes=("n1", "n2"),
        hwmon_root=str(hwmon),
        sample_interval_seconds=0.05,
        job_id="7",
        **{"startup_timeout_seconds": 5.0, **kw},  # type: ignore[arg-type]
    )
    path = tmp_path / "cpu_power.json"
    path.write_bytes(msgspec.json.encode(cfg))
    return path


def test_collect_two_nodes_and_merge(tmp_path: Path, spawn: Any) -> None:
    cfg = _config(tmp_path, make_hwmon(tmp_path / "hwmon"), required=True)
    assert _cli("cpu-power", "wait-ready", "--config", str(cfg), "--init").returncode == 0
    out = tmp_path / "logs" / "cpu_power"
    assert json.loads((out / "manifest.json").read_text())["status"] == "starting"
    procs = [
        spawn("cpu-power", "collect", "--config", str(cfg), "--hostname", h) for h in ("n1", "n2")
    ]
    ready = _cli("cpu-power", "wait-ready", "--config", str(cfg))
    assert ready.returncode == 0, ready.stderr
    assert json.loads((out / "manifest.json").read_text())["status"] == "running"
    assert json.loads((out / "ready" / "n1.ready.json").read_text())["source"] == "acpi"
    time.sleep(0.5)
    for p in procs:
        p.send_signal(signal.SIGTERM)
    for p in procs:
        p.communicate(timeout=30)
        assert p.returncode == 0
    fin = _cli("cpu-power", "finalize", "--config", str(cfg))
    assert fin.returncode == 0, fin.stdout
    m = json.loads((out / "manifest.json").read_text())
    assert (m["status"], m["publication_valid"], m["reason_codes"]) == ("complete", True, [])
    assert m["observed_nodes"] == ["n1", "n2"] and m["missing_nodes"] == []
    assert m["node_metadata"]["n1"]["status"] == "complete"
    with (out / "samples.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == m["sample_row_count"] >= 8
    keys = [(float(r["timestamp_unix"]), r["hostname"], r["sensor"]) for r in rows]
    assert keys == sorted(keys)
    assert {r["total_power_w"] for r in rows} == {"199.529"}


def test_no_source_writes_error_marker_and_aborts_wait(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    cfg = _config(tmp_path, empty, source="acpi", startup_timeout_seconds=300.0)
    res = _cli("cpu-power", "collect", "--config", str(cfg), "--hostname", "n1")
    assert res.returncode == 2
    err = json.loads((tmp_path / "logs" / "cpu_power" / "ready" / "n1.error.json").read_text())
    assert err == {
        "hostname": "n1",
        "error": f"no usable CPU power source (acpi): acpi: no power_meter hwmon channel of "
        f"kind 'total' under {empty}",
    }
    t0 = time.monotonic()
    wait = _cli("cpu-power", "wait-ready", "--config", str(cfg))
    assert wait.returncode == 1
    # early abort on the error marker, not the 300 s startup timeout
    assert time.monotonic() - t0 < 60.0  # hang guard: a fifth of the 300 s startup timeout
    assert "cpu_power_source_unavailable" in wait.stderr
    m = json.loads((tmp_path / "logs" / "cpu_power" / "manifest.json").read_text())
    assert m["status"] == "failed" and m["reason_codes"] == ["cpu_power_source_unavailable"]
    fin = _cli("cpu-power", "finalize", "--config", str(cfg))
    assert fin.returncode == 0  # not required
    m = json.loads((tmp_path / "logs" / "cpu_power" / "manifest.json").read_text())
    assert m["reason_codes"] == ["cpu_node_samples_missing", "cpu_samples_empty"]


@pytest.fixture
def exporter(tmp_path: Path):  # type: ignore[no-untyped-def]
    port = free_port()
    root = make_hwmon(tmp_path / "hwmon")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "srt_telemetry",
            "cpu-power",
            "exporter",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--hwmon-root",
            str(root),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_http(base + "/health")
        yield base, root
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)
    assert proc.returncode == 0


def test_exporter_routes(exporter) -> None:  # type: ignore[no-untyped-def]
    base, root = exporter
    r = httpx.get(base + "/metrics?x=1")
    assert r.status_code == 200 and r.headers["content-type"] == CONTENT_TYPE
    assert r.headers["connection"] == "close"
    assert r.text == (DATA / "cpu-power-exporter.txt").read_text()
    assert len(parse_text(r.text)) == 6
    h = httpx.head(base + "/metrics")
    assert h.status_code == 200 and h.content == b""
    assert httpx.get(base + "/health").text == "ok\n"
    nf = httpx.get(base + "/other")
    assert (nf.status_code, nf.text) == (404, "Not Found\n")
    assert httpx.head(base + "/other").status_code == 404
    for method in ("POST", "PUT", "DELETE"):
        na = httpx.request(method, base + "/metrics")
        assert na.status_code == 405 and na.headers["allow"] == "GET, HEAD"
    set_power(root, "hwmon3", "power1", 50_000_000)
    time.sleep(1.3)  # one refresh period
    assert (
        'oem_info="Grace Power Socket 0",source="acpi"} 50.000000'
        in httpx.get(base + "/metrics").text
    )


def test_exporter_port_in_use(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        res = _cli(
            "cpu-power",
            "exporter",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--hwmon-root",
            str(make_hwmon(tmp_path / "h")),
        )
    assert res.returncode == 2
    assert res.stderr.strip().endswith(
        f"cannot listen on 127.0.0.1:{port}: Address already in use; "
        "pick a free port (telemetry.cpu_power_exporter.port)"
    )


def test_parse_cpu_exporter_bodies() -> None:
    from srt_telemetry.cpu_scrape import parse_cpu_exporter

    mode, rows, total = parse_cpu_exporter((DATA / "cpu-power-exporter.txt").read_text())
    assert (mode, len(rows), total) == ("acpi", 6, 98.029 + 101.5)
    dcgm = (
        'cpu_power_dcgm_watts{socket="0",field_id="1130",source="dcgm"} 50.5\n'
        'cpu_power_dcgm_watts{socket="0",field_id="1132",source="dcgm"} 7\n'
        'cpu_power_dcgm_watts{socket="1",field_id="1130",source="dcgm"} 49.5\n'
    )
    mode, rows, total = parse_cpu_exporter(dcgm)
    assert (mode, total) == ("dcgm", 100.0)
    assert [r.sensor for r in rows] == [
        "dcgm/socket0/field1130",
        "dcgm/socket0/field1132",
        "dcgm/socket1/field1130",
    ]
    rails_only = 'cpu_power_acpi_watts{sensor="hwmon3/power2",type="cpu_rail",socket="0"} 5\n'
    assert parse_cpu_exporter(rails_only + dcgm)[0::2] == ("acpi", None)  # ACPI preferred
    assert parse_cpu_exporter("# nothing\n") == ("none", [], None)


def test_exporter_connection_limit(tmp_path: Path, spawn: Any) -> None:
    import socket

    port = free_port()
    cfg = tmp_path / "exporter.json"
    cfg.write_text(
        json.dumps(
            {
                "port": port,
                "bind": "127.0.0.1",
                "hwmon_root": str(make_hwmon(tmp_path / "h")),
                "max_connections": 2,
            }
        )
    )
    proc = spawn("cpu-power", "exporter", "--config", str(cfg))
    base = f"http://127.0.0.1:{port}"
    wait_http(base + "/health")

    def held(sock: socket.socket) -> bool:
        """Accepted and waiting for request headers (a connection closed at accept reads EOF)."""
        sock.settimeout(0.3)
        try:
            return sock.recv(1) != b""
        except TimeoutError:
            return True

    # Take both slots with idle connections. A slot can still be held for a moment by the
    # health check's connection, so a connection closed at accept is dropped and replaced.
    idle: list[socket.socket] = []
    try:
        stable = 0
        for _ in range(50):
            for sock in [s for s in idle if not held(s)]:  # closed at accept after all
                idle.remove(sock)
                sock.close()
            stable = stable + 1 if len(idle) == 2 else 0
            if stable == 2:  # the same two connections held over two checks
                break
            while len(idle) < 2:
                idle.append(socket.create_connection(("127.0.0.1", port)))
        assert stable == 2, "the exporter never held two idle connections"
        with socket.create_connection(("127.0.0.1", port), timeout=5) as extra:
            extra.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            assert extra.recv(100) == b""  # closed at accept, not served
    finally:
        for sock in idle:
            sock.close()
    wait_http(base + "/health")  # slots are free again
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=20)
    assert proc.returncode == 0
