from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from srt_telemetry.config import DashboardConfig
from srt_telemetry.dashboard import read_dashboard_data, render_dashboard
from srt_telemetry.errors import DashboardError
from srt_telemetry.power_samples import Sample, SamplesWriter
from srt_telemetry.svg import nice_ticks

ROLLUP = {
    "benchmark_type": "sa-bench",
    "timestamp": "2026-08-21T12:00:00.000000Z",
    "config": {"model": "m", "isl": 8192, "osl": 1024},
    "runs": [
        {
            "concurrency": 8,
            "throughput_toks": 1500.5,
            "request_throughput": 1.4,
            "ttft_mean_ms": 600.0,
            "ttft_p99_ms": 1500.0,
            "tpot_mean_ms": 5.0,
            "tpot_p99_ms": 6.0,
            "itl_mean_ms": 4.9,
            "itl_p99_ms": 11.0,
            "e2el_mean_ms": 5600.0,
            "completed_requests": 80,
            "total_input_tokens": 655360,
            "total_output_tokens": 81920,
        },
        {
            "concurrency": 4,
            "throughput_toks": 812.4,
            "request_throughput": 0.79,
            "ttft_mean_ms": 410.2,
            "ttft_p99_ms": 980.0,
            "tpot_mean_ms": 4.1,
            "tpot_p99_ms": 5.2,
            "itl_mean_ms": 4.0,
            "itl_p99_ms": 9.8,
            "e2el_mean_ms": 4600.0,
            "completed_requests": 40,
            "total_input_tokens": 327680,
            "total_output_tokens": 40960,
        },
    ],
}


def _run_dir(tmp_path: Path) -> Path:
    run = tmp_path / "logs"
    (run / "power" / "windows").mkdir(parents=True)
    (run / "benchmark-rollup.json").write_text(json.dumps(ROLLUP))
    w = SamplesWriter(run / "power" / "samples.csv")
    for seq in range(40):
        t = 1000.0 + seq
        w.write([Sample(t, seq, "n1", g, f"U{g}", 100.0 + g + seq) for g in range(4)])
    w.close()
    for c, (a, b) in {4: (1005.0, 1015.0), 8: (1020.0, 1030.0)}.items():
        (run / "power" / "windows" / f"results_concurrency_{c}.json").write_text(
            json.dumps(
                {
                    "schema_version": 1,
                    "benchmark_type": "sa-bench",
                    "result_path": f"sa/results_concurrency_{c}.json",
                    "concurrency": c,
                    "benchmark_start_time_unix": a,
                    "benchmark_end_time_unix": b,
                    "duration": b - a,
                    "clock_source": "head_node_unix_clock",
                    "status": "completed",
                    "reason": None,
                }
            )
        )
    (run / "power" / "energy.json").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "windows": [
                    {
                        "concurrency": 4,
                        "energy_joules": 4500.0,
                        "avg_power_w": 450.0,
                        "joules_per_output_token": 0.1099,
                    },
                    {
                        "concurrency": 8,
                        "energy_joules": 4900.0,
                        "avg_power_w": 490.0,
                        "joules_per_output_token": 0.0598,
                    },
                ],
            }
        )
    )
    (run / "power" / "manifest.json").write_text(
        json.dumps(
            {
                "status": "complete",
                "publication_valid": True,
                "reason_codes": [],
                "window_validations": [],
            }
        )
    )
    (run / "cpu_power").mkdir()
    (run / "cpu_power" / "samples.csv").write_text(
        "schema_version,timestamp_unix,timestamp_local,hostname,source,sensor,socket_id,power_w,cpu_rail_w,soc_w,dram_w,total_power_w,cpu_util_total,cpu_util_user,cpu_util_nice,cpu_util_sys,cpu_util_irq\n"
        + "".join(
            f"4,{1000 + i * 0.5},x,n1,acpi,hwmon3/power1,{s},99.0,,,,{198 + i},,,,,\n"
            for i in range(60)
            for s in (0, 1)
        )
    )
    return run


def test_cli_writes_a_self_contained_page(tmp_path: Path) -> None:
    run = _run_dir(tmp_path)
    res = subprocess.run(
        [sys.executable, "-m", "srt_telemetry", "dashboard", str(run)],
        capture_output=True,
        text=True,
        check=True,
    )
    out = Path(res.stdout.strip())
    assert out == run / "perf_dashboard.html"
    html = out.read_text()
    assert "<script" not in html.lower()
    assert re.findall(r"(?:src|href)=", html) == []
    assert set(re.findall(r"https?://[^\"' ]+", html)) == {"http://www.w3.org/2000/svg"}
    assert html.count("<svg") == 6
    assert html.count('class="band"') == 4  # two windows on each power chart
    assert "publishable" in html and "NOT publishable" not in html
    # summary rows sorted by concurrency, with energy per token
    rows = re.findall(r"<tr><td>(\d+)</td><td>([\d,.]+)</td>", html)
    assert rows == [("4", "812.4"), ("8", "1,500.5")]
    assert "<td>0.1099</td>" in html and "<td>0.0598</td>" in html
    for svg in re.findall(r"<svg.*?</svg>", html, re.S):  # every chart is well-formed XML
        ET.fromstring(svg)


def test_text_is_escaped(tmp_path: Path) -> None:
    run = _run_dir(tmp_path)
    html = render_dashboard(read_dashboard_data(run, DashboardConfig(title="<script>x</script>")))
    assert "<script" not in html and "&lt;script&gt;x&lt;/script&gt;" in html


def test_render_is_deterministic_and_notes_missing_inputs(tmp_path: Path) -> None:
    run = tmp_path / "empty"
    run.mkdir()
    data = read_dashboard_data(run, DashboardConfig(title="t"))
    html = render_dashboard(data)
    assert html == render_dashboard(read_dashboard_data(run, DashboardConfig(title="t")))
    assert "no benchmark-rollup.json: benchmark sections are empty" in html
    assert "no power/samples.csv: GPU power not captured" in html
    assert "GPU power: no manifest.json, numbers are not publishable." in html


def test_cpu_exporter_leg_is_plotted(tmp_path: Path) -> None:
    run = _run_dir(tmp_path)
    (run / "power" / "cpu").mkdir()
    (run / "power" / "cpu" / "samples.csv").write_text(
        "schema_version,timestamp_unix,hostname,source,sensor,socket_id,power_w,total_power_w\n"
        "1,1000.0,n2,acpi,hwmon3/power1,0,90.0,180.0\n"
        "1,1000.0,n2,acpi,hwmon4/power1,1,90.0,180.0\n"
        "1,1001.0,n2,acpi,hwmon3/power1,0,95.0,190.0\n"
    )
    data = read_dashboard_data(run, DashboardConfig())
    assert data.cpu_series["n2 (exporter)"] == [(1000.0, 180.0), (1001.0, 190.0)]
    assert len(data.cpu_series["n1"]) == 60
    assert "n2 (exporter)" in render_dashboard(data)


def test_not_publishable_is_said(tmp_path: Path) -> None:
    run = _run_dir(tmp_path)
    (run / "power" / "manifest.json").write_text(
        json.dumps(
            {
                "status": "incomplete",
                "publication_valid": False,
                "reason_codes": ["collector_interrupted"],
                "window_validations": [
                    {
                        "benchmark_type": "sa-bench",
                        "concurrency": 4,
                        "power_coverage_valid": False,
                        "reason_codes": ["sample_gap_exceeded"],
                    }
                ],
            }
        )
    )
    html = render_dashboard(read_dashboard_data(run, DashboardConfig()))
    assert "NOT publishable</b> (status incomplete; reasons: collector_interrupted)" in html
    assert "sa-bench c=4: INVALID sample_gap_exceeded" in html


def test_malformed_rollup_names_the_file(tmp_path: Path) -> None:
    run = tmp_path / "r"
    run.mkdir()
    (run / "benchmark-rollup.json").write_text("[1]")
    with pytest.raises(DashboardError) as exc:
        read_dashboard_data(run, DashboardConfig())
    assert str(exc.value) == (
        f"{run / 'benchmark-rollup.json'}: not a benchmark rollup: Expected `object`, got `array`;"
        " fix or remove the file"
    )


def test_nice_ticks() -> None:
    assert nice_ticks(0, 97) == [0, 20, 40, 60, 80, 100]
    assert nice_ticks(0.0, 0.0) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
