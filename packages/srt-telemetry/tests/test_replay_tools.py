"""The power test tools in-process: curves and their analytic energy, the capture template, the
replaying exporter's routes and death, and the fake hwmon tree read by the real ACPI reader."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from telemetry_testkit import DATA

from srt_telemetry.cpu_exporter import render_metrics
from srt_telemetry.cpu_scrape import parse_cpu_exporter
from srt_telemetry.cpu_sources import AcpiReader
from srt_telemetry.errors import ConfigError
from srt_telemetry.power_parse import parse_power
from srt_telemetry.promtext import parse_text
from srt_telemetry.testing import Curve, CurveError, curve_energy_joules, parse_curve
from srt_telemetry.testing import cli as tools_cli
from srt_telemetry.testing.capture import CaptureError, build_template
from srt_telemetry.testing.dcgm_replay import DcgmReplayServer
from srt_telemetry.testing.hwmon import write_fake_hwmon

CAPTURE = (DATA / "replay" / "dcgm-gb200-4gpu.txt").read_text()
CAPTURED_UUIDS = (
    "GPU-c8edd83a-7dc2-4667-5639-a30a879048ae",
    "GPU-d4396d51-7daf-eff7-3053-bc11d5ab951a",
    "GPU-311fdf01-245a-0417-e44e-873da90a00f0",
    "GPU-b9ce3e23-61ec-01a7-8631-6254f20f5dfd",
)


# --- curves --------------------------------------------------------------------------------


def test_parse_curve_forms() -> None:
    assert parse_curve("const:250") == Curve(kind="const", base_w=250.0)
    assert parse_curve("linear:100:2.5") == Curve(kind="linear", base_w=100.0, slope_w_per_s=2.5)
    assert parse_curve(parse_curve("linear:-1e2:0.25").render()) == parse_curve("linear:-100:0.25")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "sine:1:2",
            "--curve 'sine:1:2': not a known curve; use 'const:W' or 'linear:BASE:SLOPE' "
            "(watts, watts per second)",
        ),
        (
            "linear:100",
            "--curve 'linear:100': not a known curve; use 'const:W' or 'linear:BASE:SLOPE' "
            "(watts, watts per second)",
        ),
        (
            "const:nan",
            "--curve 'const:nan': W 'nan' is not a finite number; use 'const:W' or "
            "'linear:BASE:SLOPE' (watts, watts per second)",
        ),
        (
            "linear:1:x",
            "--curve 'linear:1:x': SLOPE 'x' is not a finite number; use 'const:W' or "
            "'linear:BASE:SLOPE' (watts, watts per second)",
        ),
    ],
)
def test_parse_curve_errors(spec: str, message: str) -> None:
    with pytest.raises(CurveError) as exc:
        parse_curve(spec)
    assert str(exc.value) == message


def _riemann(
    curve: Curve, gpus: list[int], offset: float, start: float, t0: float, t1: float
) -> float:
    """Midpoint rule on a fine grid: an independent computation of the same integral."""
    n = 20_000
    h = (t1 - t0) / n
    return sum(
        curve.power_w(t0 + (i + 0.5) * h - start, g, offset) * h for i in range(n) for g in gpus
    )


@pytest.mark.parametrize("spec", ["const:180.5", "linear:150:3", "linear:400:-2.5"])
def test_analytic_energy_matches_numeric_integral(spec: str) -> None:
    curve = parse_curve(spec)
    start, t0, t1 = 1_000.0, 1_004.25, 1_031.0
    exact = curve_energy_joules(
        curve, gpu_indices=[0, 1, 3], gpu_offset_w=7.5, start_unix=start, t0_unix=t0, t1_unix=t1
    )
    assert exact == pytest.approx(_riemann(curve, [0, 1, 3], 7.5, start, t0, t1), rel=1e-9)


def test_analytic_energy_by_hand() -> None:
    # 2 GPUs of 100 + 2 t W (GPU 1 draws 10 W more) over t in [10, 20]: per GPU 100*10 + (400-100)
    # = 1300 J, plus 10 W * 10 s for GPU 1
    energy = curve_energy_joules(
        parse_curve("linear:100:2"),
        gpu_indices=range(2),
        gpu_offset_w=10.0,
        start_unix=50.0,
        t0_unix=60.0,
        t1_unix=70.0,
    )
    assert energy == 2 * 1300 + 100
    with pytest.raises(ValueError, match="before its start"):
        curve_energy_joules(
            parse_curve("const:1"),
            gpu_indices=[0],
            gpu_offset_w=0,
            start_unix=0,
            t0_unix=2,
            t1_unix=1,
        )


# --- the capture template ------------------------------------------------------------------


def test_template_serves_the_capture_with_the_curve() -> None:
    tpl = build_template(CAPTURE)
    assert tpl.uuids == CAPTURED_UUIDS and not tpl.captured_timestamps
    body = tpl.render([101.5, 202.25, 303.0, 404.125]).decode()
    parsed = parse_power(body)
    assert parsed.reasons == []
    assert [(r.gpu_index, r.gpu_uuid, r.power_w) for r in parsed.readings] == [
        (0, CAPTURED_UUIDS[0], 101.5),
        (1, CAPTURED_UUIDS[1], 202.25),
        (2, CAPTURED_UUIDS[2], 303.0),
        (3, CAPTURED_UUIDS[3], 404.125),
    ]
    # every other line is the capture's own, in its order
    original = [ln for ln in CAPTURE.splitlines() if "POWER_USAGE{" not in ln]
    served = [ln for ln in body.splitlines() if "POWER_USAGE{" not in ln]
    assert served == original


def test_template_clones_gpus_and_derives_node_uuids() -> None:
    tpl = build_template(CAPTURE, gpus=8, hostname="node-07")
    assert tpl.gpus == 8 and len(set(tpl.uuids)) == 8
    assert not set(tpl.uuids) & set(CAPTURED_UUIDS)
    assert build_template(CAPTURE, gpus=8, hostname="node-07").uuids == tpl.uuids  # deterministic
    assert not set(build_template(CAPTURE, gpus=8, hostname="node-08").uuids) & set(tpl.uuids)
    parsed = parse_text(tpl.render([float(k) for k in range(8)]).decode())
    rows = list(zip(parsed.names, parsed.labels, parsed.values, strict=True))
    for family in ("DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_FB_USED"):
        labels = [dict(lab) for name, lab, _ in rows if name == family]
        assert [lab["gpu"] for lab in labels] == [str(k) for k in range(8)]
        assert [lab["device"] for lab in labels] == [f"nvidia{k}" for k in range(8)]
        assert [lab["UUID"] for lab in labels] == list(tpl.uuids)
        assert {lab["Hostname"] for lab in labels} == {"node-07"}
    # GPU 5 repeats captured GPU 1's other values (temperature 28)
    temps = [v for name, _, v in rows if name == "DCGM_FI_DEV_GPU_TEMP"]
    assert temps[5] == temps[1] and temps[4] == temps[0]


def test_template_fewer_gpus_and_timestamps() -> None:
    tpl = build_template(CAPTURE, gpus=2)
    assert tpl.uuids == CAPTURED_UUIDS[:2]
    parsed = parse_text(tpl.render([1.0, 2.0], timestamp_ms=1_700_000_000_123).decode())
    assert set(parsed.timestamps_ms.values()) == {1_700_000_000_123}
    assert len(parsed.timestamps_ms) == len(parsed) == 12
    assert [r.gpu_index for r in parse_power(tpl.render([1.0, 2.0]).decode()).readings] == [0, 1]
    with pytest.raises(ValueError, match="3 power values for 2 GPUs"):
        tpl.render([1.0, 2.0, 3.0])


def test_template_refuses_a_body_without_power() -> None:
    with pytest.raises(CaptureError) as exc:
        build_template('DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-x"} 30\n')
    assert str(exc.value) == (
        "the capture has no DCGM_FI_DEV_POWER_USAGE sample with `gpu` and `UUID` labels; pass a "
        "dcgm-exporter /metrics capture (e.g. ../shared/corpus/metrics/dcgm-gb200.txt)"
    )
    with pytest.raises(CaptureError, match="--gpus 0: serve at least one GPU"):
        build_template(CAPTURE, gpus=0)


def test_template_of_the_whole_corpus_capture(dcgm_text: str) -> None:
    tpl = build_template(dcgm_text, gpus=8, hostname="n1")
    parsed = parse_power(tpl.render([200.0 + k for k in range(8)]).decode())
    assert parsed.reasons == []
    assert [r.power_w for r in parsed.readings] == [200.0 + k for k in range(8)]


# --- the replaying exporter in-process ----------------------------------------------------


class FakeClock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def served() -> Iterator[tuple[FakeClock, str]]:
    clock = FakeClock(5_000.0)
    server = DcgmReplayServer(
        build_template(CAPTURE),
        parse_curve("linear:100:2"),
        gpu_offset_w=10.0,
        start_unix=4_990.0,
        clock_offset_s=-30.0,
        clock=clock,
    )
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    yield clock, f"http://127.0.0.1:{server.port}"
    server.shutdown()
    thread.join(timeout=5)


def test_replay_routes(served: tuple[FakeClock, str]) -> None:
    clock, base = served
    with httpx.Client() as client:
        first = client.get(f"{base}/metrics")
        clock.now += 5.0
        second = client.get(f"{base}/metrics?x=1")
        health = client.get(f"{base}/health")
        missing = client.get(f"{base}/nope")
    assert first.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    # t = 10 s then 15 s: 100 + 2 t + 10 k
    assert [r.power_w for r in parse_power(first.text).readings] == [120.0, 130.0, 140.0, 150.0]
    assert [r.power_w for r in parse_power(second.text).readings] == [130.0, 140.0, 150.0, 160.0]
    assert set(parse_text(second.text).timestamps_ms.values()) == {4_975_000}  # 5005 - 30 s
    info = health.json()
    assert info["status"] == "ok" and info["clock_unix"] == 4_975.0
    assert info["start_unix"] == 4_990.0 and info["uuids"] == list(CAPTURED_UUIDS)
    assert (info["curve"], info["gpu_offset_w"], info["gpus"]) == ("linear:100.0:2.0", 10.0, 4)
    assert missing.status_code == 404


def test_replay_dies_after_and_closes_the_port() -> None:
    server = DcgmReplayServer(build_template(CAPTURE), parse_curve("const:100"), die_after_s=0.3)
    url = f"http://127.0.0.1:{server.port}/metrics"
    outcome: list[str] = []
    thread = threading.Thread(target=lambda: outcome.append(server.serve()), daemon=True)
    thread.start()
    with httpx.Client() as client:
        assert client.get(url).status_code == 200
        thread.join(timeout=5)
        assert outcome == ["died"]
        with pytest.raises(httpx.TransportError):
            client.get(url)  # the kept-alive connection is cut, not answered
    with pytest.raises(httpx.ConnectError):
        httpx.get(url)  # and nothing listens any more


def test_replay_cli_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert tools_cli.main(["replay-dcgm", "--capture", str(tmp_path / "none.txt")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"srt-telemetry testing replay-dcgm: error: --capture {tmp_path}/none.txt"
    )
    cap = tmp_path / "c.txt"
    cap.write_text(CAPTURE)
    assert tools_cli.main(["replay-dcgm", "--capture", str(cap), "--curve", "ramp"]) == 2
    assert "not a known curve" in capsys.readouterr().err
    assert tools_cli.main(["replay-dcgm", "--capture", str(cap), "--die-after-s", "0"]) == 2
    assert capsys.readouterr().err == (
        "srt-telemetry testing replay-dcgm: error: --die-after-s 0.0: must be > 0\n"
    )


def _replay_info(cap: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Start the real `replay-dcgm` process, read its JSON line, stop it (SIGTERM, exit 0)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "srt_telemetry.testing", "replay-dcgm", "--capture", str(cap),
         *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else ""
        info: dict[str, Any] = json.loads(line)
        assert httpx.get(info["url"], timeout=5.0).status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=10)
    assert proc.returncode == 0
    return info


def test_replay_cli_takes_the_planners_port_forms_and_names_the_node(tmp_path: Path) -> None:
    """`--port` as the planner substitutes `{port}` (PORT, :PORT, HOST:PORT), dcgm-exporter's
    `--address` / `--collect-interval`, and the default hostname: $SLURMD_NODENAME, else this
    machine's short name (the UUIDs derive from it). Port 0 everywhere: any free port."""
    cap = tmp_path / "c.txt"
    cap.write_text(CAPTURE)
    env = {k: v for k, v in os.environ.items() if k != "SLURMD_NODENAME"}
    plain = _replay_info(cap, "--port", "0", env=env)
    assert (plain["host"], plain["port"] > 0) == ("127.0.0.1", True)
    here = socket.gethostname().split(".", 1)[0]
    assert plain["uuids"] == list(build_template(CAPTURE, hostname=here).uuids)
    colon = _replay_info(cap, "--port", ":0", env={**env, "SLURMD_NODENAME": "gpu-node-3"})
    assert colon["host"] == "127.0.0.1"  # `:PORT` keeps --host
    assert colon["uuids"] == list(build_template(CAPTURE, hostname="gpu-node-3").uuids)
    assert colon["uuids"] != plain["uuids"]
    hosted = _replay_info(cap, "--port", "127.0.0.1:0", "--host", "0.0.0.0", env=env)
    assert hosted["host"] == "127.0.0.1"  # HOST:PORT names the bind address
    dcgm_style = _replay_info(
        cap, "--collect-interval=100", "--address", "127.0.0.1:0", "--hostname", "n9", env=env
    )
    assert dcgm_style["host"] == "127.0.0.1"
    assert dcgm_style["uuids"] == list(build_template(CAPTURE, hostname="n9").uuids)


def test_parse_listen_forms_and_errors() -> None:
    assert tools_cli.parse_listen("9401", "--port") == (None, 9401)
    assert tools_cli.parse_listen(":9401", "--address") == (None, 9401)
    assert tools_cli.parse_listen("10.0.0.5:9401", "--port") == ("10.0.0.5", 9401)
    assert tools_cli.parse_listen("[::1]:0", "--port") == ("::1", 0)
    for bad in ("", "x", ":", "70000", "1:-1"):
        with pytest.raises(ConfigError) as exc:
            tools_cli.parse_listen(bad, "--port")
        assert str(exc.value) == (
            f"--port {bad!r}: not a port; give PORT, :PORT or HOST:PORT with PORT in 0..65535"
        )


# --- the fake hwmon tree -------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["acpi", "flat"])
def test_fake_hwmon_is_read_by_the_acpi_reader(tmp_path: Path, layout: str) -> None:
    root = tmp_path / "hwmon"
    tree = write_fake_hwmon(root, sockets=2, watts=120.0, socket_offset_w=10.0, layout=layout)  # type: ignore[arg-type]
    assert tree.node_total_w == 250.0
    reader = AcpiReader(root)
    assert reader.usable
    got = sorted((r.socket, r.kind, r.label, r.watts) for r in reader.read())
    assert got == [
        ("0", "cpu_rail", "CPU Power Socket 0", 72.0),
        ("0", "soc", "SysIO Power Socket 0", 24.0),
        ("0", "total", "Grace Power Socket 0", 120.0),
        ("1", "cpu_rail", "CPU Power Socket 1", 78.0),
        ("1", "soc", "SysIO Power Socket 1", 26.0),
        ("1", "total", "Grace Power Socket 1", 130.0),
    ]
    # the exporter's body of these readings, as the head-side scraper parses it
    mode, rows, total = parse_cpu_exporter(render_metrics(reader.read()))
    assert (mode, len(rows), total) == ("acpi", 6, 250.0)
    # rewriting changes the values a running reader sees, not the channels it found
    write_fake_hwmon(root, sockets=2, watts=200.0, layout=layout)  # type: ignore[arg-type]
    assert sum(r.watts for r in reader.read() if r.kind == "total") == 400.0
    assert len(AcpiReader(root).channels) == len(reader.channels) == 6


def test_fake_hwmon_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "hw"
    assert (
        tools_cli.main(["fake-hwmon", "--root", str(root), "--sockets", "1", "--watts", "90"]) == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["node_total_w"] == 90.0 and out["sockets"] == 1
    assert Path(out["value_files"]["Grace Power Socket 0"]).read_text() == "90000000\n"
    assert tools_cli.main(["fake-hwmon", "--root", str(root), "--watts", "-5"]) == 2
    assert capsys.readouterr().err == (
        "srt-telemetry testing fake-hwmon: error: watts=-5.0, socket_offset_w=0.0: "
        "power must be > 0\n"
    )
