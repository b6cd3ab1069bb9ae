"""GPU power against the replaying DCGM exporter, all real processes: `python -m
srt_telemetry.testing replay-dcgm` per node, `srt-telemetry power collect`, `wait-ready`, window
and result files written as srt-bench writes them, SIGTERM, `power finalize`. The energy in
`energy.json` is compared with the curve's analytic energy (within 1 %), and the failure cases
end with their reason codes: an exporter that dies mid-window, a clock step inside a window, and
two nodes replaying one capture without distinct hostnames."""

from __future__ import annotations

import csv
import json
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from telemetry_testkit import DATA

from srt_telemetry.config import (
    ExpectedDevice,
    ExpectedWindow,
    PowerConfig,
    PowerEndpoint,
    WorkerAssignment,
)
from srt_telemetry.promtext import parse_text
from srt_telemetry.testing import curve_energy_joules, parse_curve
from srt_telemetry.testing.dcgm_replay import ReplayInfo
from srt_telemetry.testing.hwmon import write_fake_hwmon

pytestmark = pytest.mark.slow

CAPTURE = DATA / "replay" / "dcgm-gb200-4gpu.txt"
TOOLS = (sys.executable, "-m", "srt_telemetry.testing")
Replay = Callable[..., tuple[subprocess.Popen[str], ReplayInfo]]


def _readline(proc: subprocess.Popen[str], timeout: float = 20.0) -> str:
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout):
            raise TimeoutError(f"{proc.args}: no output line within {timeout} s")
    return proc.stdout.readline()


@pytest.fixture
def replay() -> Iterator[Replay]:
    """Start replaying exporters (real processes); every one is reaped at teardown."""
    procs: list[subprocess.Popen[str]] = []

    def start(*args: str) -> tuple[subprocess.Popen[str], ReplayInfo]:
        proc = subprocess.Popen(
            [*TOOLS, "replay-dcgm", "--capture", str(CAPTURE), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        procs.append(proc)
        line = _readline(proc)
        assert line, proc.communicate(timeout=10)
        return proc, msgspec.json.decode(line, type=ReplayInfo)

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
        proc.communicate(timeout=10)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "srt_telemetry", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _config(
    tmp_path: Path,
    nodes: dict[str, tuple[str, int]],
    *,
    concurrencies: tuple[int, ...] = (4,),
    required: bool,
    cpu_urls: dict[str, str] | None = None,
    run_time_windows: str | None = None,
) -> Path:
    """A PowerConfig as the planner writes it: one endpoint per node, every GPU expected."""
    devices = [
        ExpectedDevice(
            hostname=host,
            gpu_index=g,
            assignments=(WorkerAssignment(worker_role="decode", worker_index=i, worker_process=0),),
        )
        for i, (host, (_, gpus)) in enumerate(sorted(nodes.items()))
        for g in range(gpus)
    ]
    cfg = PowerConfig(
        power_dir=str(tmp_path / "logs" / "power"),
        result_root=str(tmp_path / "logs"),
        endpoints=tuple(PowerEndpoint(hostname=h, url=u) for h, (u, _) in sorted(nodes.items())),
        expected_devices=tuple(devices),
        expected_windows=tuple(
            ExpectedWindow(benchmark_type="sa-bench", concurrency=c) for c in concurrencies
        ),
        job_id="17",
        run_name="replay",
        collect_interval_ms=250,
        request_timeout_seconds=1.0,
        startup_timeout_seconds=10.0,
        required=required,
        exporter_command="python -m srt_telemetry.testing replay-dcgm",
        cpu_exporter_endpoints=tuple(
            PowerEndpoint(hostname=h, url=u) for h, u in sorted((cpu_urls or {}).items())
        ),
        run_time_windows=run_time_windows,
    )
    path = tmp_path / "power.json"
    path.write_bytes(msgspec.json.encode(cfg))
    return path


def _measure(seconds: float) -> tuple[float, float, float]:
    """(start, end, duration) as srt-bench takes them: wall clock at both ends, duration on the
    monotonic clock."""
    m0, start = time.monotonic(), time.time()
    time.sleep(seconds)
    return start, time.time(), time.monotonic() - m0


def _write_window(
    logs: Path, concurrency: int, start: float, end: float, duration: float, tokens: int
) -> None:
    """The result file and `windows/<stem>.json`, in the shape srt-bench writes them."""
    stem = f"results_concurrency_{concurrency}_gpus_12"
    rel = f"sa-bench_isl_8_osl_8/{stem}.json"
    (logs / "sa-bench_isl_8_osl_8").mkdir(parents=True, exist_ok=True)
    times = {
        "benchmark_start_time_unix": start,
        "benchmark_end_time_unix": end,
        "duration": duration,
    }
    (logs / rel).write_text(json.dumps({**times, "total_output_tokens": tokens}))
    window = {
        "schema_version": 1,
        "benchmark_type": "sa-bench",
        "result_path": rel,
        "concurrency": concurrency,
        **times,
        "clock_source": "head_node_unix_clock",
        "status": "completed",
        "reason": None,
    }
    (logs / "power" / "windows" / f"{stem}.json").write_text(json.dumps(window))


def _collect(spawn: Any, cfg: Path) -> subprocess.Popen[str]:
    proc: subprocess.Popen[str] = spawn("power", "collect", "--config", str(cfg))
    ready = _cli("power", "wait-ready", "--config", str(cfg))
    assert ready.returncode == 0, ready.stderr
    return proc


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err


def _finalize(cfg: Path, *flags: str) -> tuple[int, dict[str, Any]]:
    fin = _cli("power", "finalize", "--config", str(cfg), *flags)
    assert fin.stdout, fin.stderr
    return fin.returncode, json.loads(fin.stdout)


def _read(tmp_path: Path, name: str) -> Any:
    return json.loads((tmp_path / "logs" / "power" / name).read_text())


def test_energy_matches_the_analytic_curve(
    tmp_path: Path, spawn: Any, replay: Replay, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two nodes (8 GPUs on a rising line, 4 at constant power) plus the CPU exporter leg over a
    fake hwmon tree: publishable, and J, W and J/token within 1 % of the analytic values."""
    t0 = time.time() - 30.0  # node-a's curve started 30 s ago (--start-unix), node-b's now
    lin, const = parse_curve("linear:150:4"), parse_curve("const:310.25")
    _, a = replay(
        "--curve", lin.render(), "--gpu-offset-w", "12.5", "--gpus", "8", "--hostname", "node-a",
        "--start-unix", repr(t0),
    )  # fmt: skip
    _, b = replay("--curve", const.render(), "--gpu-offset-w", "0.5", "--hostname", "node-b")
    assert a.start_unix == t0 and b.start_unix > t0 + 29 and len(set(a.uuids + b.uuids)) == 12
    a_start, b_start = a.start_unix, b.start_unix
    hw = write_fake_hwmon(tmp_path / "hwmon", sockets=2, watts=95.5, socket_offset_w=4.5)
    cpu = spawn(
        "cpu-power", "exporter", "--port", "0", "--bind", "127.0.0.1", "--source", "acpi",
        "--hwmon-root", str(hw.root),
    )  # fmt: skip
    cpu_url = _readline(cpu).split()[-1]  # "listening on 127.0.0.1:PORT"
    cfg = _config(
        tmp_path,
        {"node-a": (a.url, 8), "node-b": (b.url, 4)},
        required=True,
        cpu_urls={"node-a": f"http://{cpu_url}/metrics"},
    )
    collector = _collect(spawn, cfg)
    start, end, duration = _measure(2.5)
    _write_window(tmp_path / "logs", 4, start, end, duration, tokens=1234)
    time.sleep(0.3)
    _stop(collector)

    code, out = _finalize(cfg)
    assert (code, out) == (
        0,
        {
            "exit_nonzero": False,
            "publication_valid": True,
            "reason_codes": [],
            "status": "complete",
        },
    )
    m = _read(tmp_path, "manifest.json")
    assert m["publication_valid"] and m["window_validations"][0]["power_coverage_valid"]
    assert len(m["observed_devices"]) == 12
    (w,) = _read(tmp_path, "energy.json")["windows"]

    def analytic(curve: Any, gpus: range, offset: float, t_start: float) -> list[float]:
        return [
            curve_energy_joules(
                curve,
                gpu_indices=[g],
                gpu_offset_w=offset,
                start_unix=t_start,
                t0_unix=start,
                t1_unix=end,
            )
            for g in gpus
        ]

    per_a = analytic(lin, range(8), 12.5, a_start)
    per_b = analytic(const, range(4), 0.5, b_start)
    expected = sum(per_a) + sum(per_b)
    with capsys.disabled():
        got = w["energy_joules"]
        print(
            f"\nreplayed GPU energy over {end - start:.3f} s: collector {got:.3f} J, "
            f"analytic {expected:.3f} J ({100 * (got / expected - 1):+.4f} %)"
        )
    assert w["energy_joules"] == pytest.approx(expected, rel=0.01)
    assert w["avg_power_w"] == pytest.approx(expected / (end - start), rel=0.01)
    assert w["total_output_tokens"] == 1234
    assert w["joules_per_output_token"] == pytest.approx(expected / 1234, rel=0.01)
    for g in range(8):
        assert w["per_device_joules"][f"node-a/{g}"] == pytest.approx(per_a[g], rel=0.01)
    for g in range(4):  # a constant curve integrates exactly whatever the sample times
        assert w["per_device_joules"][f"node-b/{g}"] == pytest.approx(per_b[g], rel=1e-6)
    # each sample is the curve at its own time stamp, within the drift a scrape's length allows
    slack = 4.0 * m["max_scrape_duration_seconds"] + 0.01
    with (tmp_path / "logs" / "power" / "samples.csv").open() as fh:
        rows = [r for r in csv.DictReader(fh) if r["hostname"] == "node-a"]
    drift = [
        float(r["power_w"])
        - lin.power_w(float(r["timestamp_unix"]) - a_start, int(r["gpu_index"]), 12.5)
        for r in rows
    ]
    assert rows and max(map(abs, drift)) <= slack
    # CPU leg B: the exporter over the fake tree, scraped by the collector every cycle
    with (tmp_path / "logs" / "power" / "cpu" / "samples.csv").open() as fh:
        cpu_rows = list(csv.DictReader(fh))
    assert cpu_rows and {r["total_power_w"] for r in cpu_rows} == {repr(hw.node_total_w)}
    assert {r["source"] for r in cpu_rows} == {"acpi"} and hw.node_total_w == 195.5
    logs = tmp_path / "logs"
    check = _cli(
        "power", "validate", "--power-dir", str(logs / "power"), "--result-root", str(logs)
    )
    assert (check.returncode, check.stdout) == (0, "publishable and consistent\n"), check.stderr


@pytest.mark.parametrize("searched", [True, False], ids=["run-time-windows", "fixed-list"])
def test_a_capacity_search_expects_the_windows_it_stamped(
    tmp_path: Path, spawn: Any, replay: Replay, searched: bool
) -> None:
    """A capacity search picks its concurrencies while it runs, so the plan lists none: with
    `run_time_windows` every window it stamped is validated and gets its energy; without it the
    same windows are unexpected and the capture is not publishable."""
    _, info = replay("--curve", "const:250", "--gpus", "2", "--hostname", "node-a")
    cfg = _config(
        tmp_path,
        {"node-a": (info.url, 2)},
        concurrencies=(),
        required=False,
        run_time_windows="sa-bench" if searched else None,
    )
    collector = _collect(spawn, cfg)
    for c, tokens in ((1, 100), (8, 800)):
        start, end, duration = _measure(1.2)
        _write_window(tmp_path / "logs", c, start, end, duration, tokens=tokens)
    time.sleep(0.3)
    _stop(collector)
    code, out = _finalize(cfg)
    m = _read(tmp_path, "manifest.json")
    if not searched:
        assert (code, out["publication_valid"]) == (0, False)
        assert m["window_validations"] == []
        assert {r for e in m["artifact_errors"] for r in e["reason_codes"]} == {
            "measurement_window_unexpected"
        }
        return
    assert (code, out["publication_valid"], out["reason_codes"]) == (0, True, [])
    assert m["expected_windows"] == [
        {"benchmark_type": "sa-bench", "concurrency": 1},
        {"benchmark_type": "sa-bench", "concurrency": 8},
    ]
    assert [v["power_coverage_valid"] for v in m["window_validations"]] == [True, True]
    windows = _read(tmp_path, "energy.json")["windows"]
    assert [w["total_output_tokens"] for w in windows] == [100, 800]
    for w in windows:  # 2 GPUs at a constant 250 W
        assert w["avg_power_w"] == pytest.approx(500.0, rel=1e-6)
    logs = tmp_path / "logs"
    check = _cli(
        "power", "validate", "--power-dir", str(logs / "power"), "--result-root", str(logs)
    )
    assert (check.returncode, check.stdout) == (0, "publishable and consistent\n"), check.stderr


def test_exporter_dies_mid_window(tmp_path: Path, spawn: Any, replay: Replay) -> None:
    """The exporter closes its port inside the window: the samples alone already make the window
    unpublishable (`measurement_window_not_bracketed`, `endpoint_http_error`); with the runtime's
    fact `--exporter-exited` the capture is `incomplete` with `exporter_exited`; required => 1.
    The exporter dies on a signal sent once the window has begun (not on a timer that a slow
    start-up of the collector can outrun); the window ends after the exporter has exited, and the
    collector's final scrape after SIGTERM meets the closed port."""
    exporter, info = replay("--curve", "linear:200:1", "--gpus", "4", "--die-on-sigusr1")
    cfg = _config(tmp_path, {"node-a": (info.url, 4)}, required=True)
    collector = _collect(spawn, cfg)
    m0, start = time.monotonic(), time.time()
    exporter.send_signal(signal.SIGUSR1)
    _, err = exporter.communicate(timeout=60)
    assert exporter.returncode == 1
    assert err == "replay-dcgm: died on SIGUSR1 as asked (--die-on-sigusr1)\n"
    end, duration = time.time(), time.monotonic() - m0
    _write_window(tmp_path / "logs", 4, start, end, duration, tokens=100)
    time.sleep(0.3)
    _stop(collector)

    code, out = _finalize(cfg)
    assert code == 1 and out["publication_valid"] is False and out["status"] == "complete"
    assert "endpoint_http_error" in out["reason_codes"]
    (v,) = _read(tmp_path, "manifest.json")["window_validations"]
    assert v["reason_codes"] == ["measurement_window_not_bracketed"]
    assert _read(tmp_path, "energy.json")["windows"][0]["energy_joules"] is None

    code, out = _finalize(cfg, "--exporter-exited")
    assert (code, out["status"], out["publication_valid"]) == (1, "incomplete", False)
    assert out["reason_codes"][0] == "exporter_exited" and out["exit_nonzero"] is True


def test_clock_offsets(tmp_path: Path, spawn: Any, replay: Replay) -> None:
    """An exporter whose clock is an hour ahead: samples are still stamped on the head node's
    clock (`timestamp_source: head_node_unix_clock`), but its own sample timestamps show the
    node's clock is off, so the package is not publishable (`clock_sync_unverified`, the node
    and its offset in `clock_sync_failures`). The window's own clock check is separate: a wall
    clock that steps 2 s inside a window gives `measurement_window_clock_mismatch` for that
    window only."""
    curve = parse_curve("linear:120:3")
    _, info = replay("--curve", curve.render(), "--gpus", "2", "--clock-offset-s", "3600")
    served = parse_text(_http_get(info.url))
    assert served.timestamps_ms and min(served.timestamps_ms.values()) > (time.time() + 3590) * 1e3
    cfg = _config(tmp_path, {"node-a": (info.url, 2)}, concurrencies=(1, 2), required=False)
    collector = _collect(spawn, cfg)
    s1, e1, d1 = _measure(1.5)
    _write_window(tmp_path / "logs", 1, s1, e1, d1, tokens=500)
    s2, e2, d2 = _measure(1.5)
    _write_window(tmp_path / "logs", 2, s2, e2 + 2.0, d2, tokens=500)  # the clock stepped +2 s
    time.sleep(2.4)  # samples past the stepped end, so only the clock check can object
    _stop(collector)

    code, out = _finalize(cfg)
    assert (code, out["status"], out["publication_valid"]) == (0, "complete", False)
    assert out["reason_codes"] == ["clock_sync_unverified"]
    manifest = _read(tmp_path, "manifest.json")
    assert manifest["clock_checks"] == {"node-a": "failed"}
    (failure,) = manifest["clock_sync_failures"]
    assert failure["hostname"] == "node-a"
    assert 3599.0 < failure["offset_seconds"] < 3601.0
    v1, v2 = manifest["window_validations"]
    assert (v1["concurrency"], v1["reason_codes"], v1["power_coverage_valid"]) == (1, [], True)
    assert (v2["concurrency"], v2["reason_codes"]) == (2, ["measurement_window_clock_mismatch"])
    w1 = _read(tmp_path, "energy.json")["windows"][0]
    expected = curve_energy_joules(
        curve,
        gpu_indices=range(2),
        gpu_offset_w=0.0,
        start_unix=info.start_unix,
        t0_unix=s1,
        t1_unix=e1,
    )
    assert w1["energy_joules"] == pytest.approx(expected, rel=0.01)
    with (tmp_path / "logs" / "power" / "samples.csv").open() as fh:
        stamps = [float(r["timestamp_unix"]) for r in csv.DictReader(fh)]
    assert max(stamps) < time.time()  # the head's clock, not the exporter's


def test_a_stamping_exporter_on_the_head_clock_passes_the_clock_check(
    tmp_path: Path, spawn: Any, replay: Replay
) -> None:
    _, info = replay("--gpus", "2", "--clock-offset-s", "0")
    cfg = _config(tmp_path, {"node-a": (info.url, 2)}, required=True)
    collector = _collect(spawn, cfg)
    start, end, duration = _measure(1.5)
    _write_window(tmp_path / "logs", 4, start, end, duration, tokens=100)
    time.sleep(1.2)
    _stop(collector)
    code, out = _finalize(cfg)
    assert (code, out["publication_valid"], out["reason_codes"]) == (0, True, [])
    manifest = _read(tmp_path, "manifest.json")
    assert (manifest["clock_checks"], manifest["clock_sync_failures"]) == ({"node-a": "ok"}, [])


def test_the_clock_check_per_node(tmp_path: Path, spawn: Any, replay: Replay) -> None:
    """Three nodes: one whose exporter stamps samples 2 s ahead (beyond the tolerance,
    max(0.5 s, 0.25 s cadence) = 0.5 s), one 0.2 s behind (within it) and one that stamps
    nothing, as dcgm-exporter (not checkable, not a failure). Only the first fails the check, and
    the offline validator agrees with the stored verdict (it re-derives the reason)."""
    _, ahead = replay("--gpus", "1", "--hostname", "n-ahead", "--clock-offset-s", "2")
    _, close = replay("--gpus", "1", "--hostname", "n-close", "--clock-offset-s", "-0.2")
    _, plain = replay("--gpus", "1", "--hostname", "n-plain")
    nodes = {"n-ahead": (ahead.url, 1), "n-close": (close.url, 1), "n-plain": (plain.url, 1)}
    cfg = _config(tmp_path, nodes, required=True)
    collector = _collect(spawn, cfg)
    start, end, duration = _measure(1.0)
    _write_window(tmp_path / "logs", 4, start, end, duration, tokens=100)
    time.sleep(0.6)
    _stop(collector)
    code, out = _finalize(cfg)
    assert (code, out["status"], out["publication_valid"]) == (1, "complete", False)
    assert out["reason_codes"] == ["clock_sync_unverified"]
    manifest = _read(tmp_path, "manifest.json")
    assert manifest["clock_tolerance_seconds"] == 0.5
    assert manifest["clock_checks"] == {
        "n-ahead": "failed",
        "n-close": "ok",
        "n-plain": "not_checkable",
    }
    (failure,) = manifest["clock_sync_failures"]
    assert failure["hostname"] == "n-ahead" and 1.9 < failure["offset_seconds"] < 2.1
    (v,) = manifest["window_validations"]
    assert v["power_coverage_valid"] is True  # the windows themselves are fine
    logs = tmp_path / "logs"
    check = _cli(
        "power", "validate", "--power-dir", str(logs / "power"), "--result-root", str(logs)
    )
    assert check.returncode == 1
    assert "not publishable: reasons ['clock_sync_unverified']" in check.stdout + check.stderr
    assert "stored" not in check.stdout + check.stderr  # no disagreement with the stored verdict


def test_one_capture_on_two_nodes_needs_distinct_hostnames(
    tmp_path: Path, spawn: Any, replay: Replay
) -> None:
    """Two exporters on one machine without `--hostname` both take this machine's name, so they
    serve the same UUIDs, which the finalizer rejects as `gpu_uuid_changed` (one UUID on two
    devices)."""
    _, a = replay("--gpus", "2")
    _, b = replay("--gpus", "2")
    assert a.uuids == b.uuids
    cfg = _config(tmp_path, {"n1": (a.url, 2), "n2": (b.url, 2)}, required=False)
    collector = _collect(spawn, cfg)
    start, end, duration = _measure(1.0)
    _write_window(tmp_path / "logs", 4, start, end, duration, tokens=10)
    time.sleep(0.3)
    _stop(collector)
    code, out = _finalize(cfg)
    assert (code, out["publication_valid"], out["reason_codes"]) == (0, False, ["gpu_uuid_changed"])


def _http_get(url: str) -> str:
    import httpx

    return httpx.get(url, timeout=5.0).text
