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
    # throughput, TTFT, ITL, GPU per node, GPU per GPU (one node), CPU, energy per token
    assert html.count("<svg") == 7
    assert html.count('class="band"') == 6  # two windows on each of the three power charts
    assert html.count('class="bl">c=4</text>') == html.count('class="bl">c=8</text>') == 3
    assert "publishable" in html and "NOT publishable" not in html
    per_gpu = _chart(html, "GPU power per GPU, node n1")
    assert re.findall(r"<polyline[^>]*><title>([^<]*)</title>", per_gpu) == [
        f"n1/{g}" for g in range(4)
    ]
    # summary rows sorted by concurrency, with energy per token
    rows = re.findall(r"<tr><td>(\d+)</td><td>([\d,.]+)</td>", html)
    assert rows == [("4", "812.4"), ("8", "1,500.5")]
    assert "<td>0.1099</td>" in html and "<td>0.0598</td>" in html
    for svg in re.findall(r"<svg.*?</svg>", html, re.S):  # every chart is well-formed XML
        ET.fromstring(svg)


def _chart(html: str, title: str) -> str:
    (svg,) = [c for c in re.findall(r"<svg.*?</svg>", html, re.S) if f'aria-label="{title}"' in c]
    return svg


def _lines(svg: str) -> list[str]:
    return re.findall(r"<polyline[^>]*><title>([^<]*)</title>", svg)


def test_per_gpu_lines_one_chart_per_node_at_most_8_lines(tmp_path: Path) -> None:
    """Two nodes of 10 GPUs: per node one chart of GPUs 0-7 and one of 8-9, each line one GPU
    (its own watts, not the node's sum), with both windows shaded on every chart."""
    run = _run_dir(tmp_path)
    w = SamplesWriter(run / "power" / "samples.csv")
    for seq in range(30):
        w.write(
            [
                Sample(1000.0 + seq, seq, host, g, f"{host}-U{g}", 10.0 * g + seq + base)
                for host, base in (("n1", 0.0), ("n2", 500.0))
                for g in range(10)
            ]
        )
    w.close()
    data = read_dashboard_data(run, DashboardConfig())
    assert sorted(data.gpu_device_series) == ["n1", "n2"]
    assert data.gpu_device_series["n2"][3][:2] == [(1000.0, 530.0), (1001.0, 531.0)]
    assert data.gpu_series["n1"][0] == (1000.0, sum(10.0 * g for g in range(10)))
    html = render_dashboard(data)
    for host in ("n1", "n2"):
        first = _chart(html, f"GPU power per GPU, node {host}, GPUs 0–7")
        second = _chart(html, f"GPU power per GPU, node {host}, GPUs 8–9")
        assert _lines(first) == [f"{host}/{g}" for g in range(8)]
        assert _lines(second) == [f"{host}/8", f"{host}/9"]
        assert first.count('class="band"') == second.count('class="band"') == 2
    assert html.count("<svg") == 10  # 3 benchmark, node sums, 4 per-GPU, CPU, energy
    assert html == render_dashboard(read_dashboard_data(run, DashboardConfig()))  # same bytes


def _energy(c: int, j_out: float, j_total: float, valid: bool = True) -> dict[str, object]:
    return {
        "gpu_energy_joules": 1000.0 * c,
        "gpu_avg_power_w": 100.0 * c,
        "joules_per_output_token": j_out,
        "joules_per_total_token": j_total,
        "per_gpu_joules": {"n1/0": 1000.0 * c},
        "per_node_joules": {"n1": 1000.0 * c},
        "cpu_energy_joules": 77.5 * c,
        "per_node_cpu_joules": {"n1": 77.5 * c},
        "power_coverage_valid": valid,
        "reason_codes": [] if valid else ["sample_gap_exceeded"],
        "a_field_from_a_newer_srt_bench": 1,
    }


def test_energy_per_token_comes_from_the_rollup_when_it_has_energy(tmp_path: Path) -> None:
    run = _run_dir(tmp_path)
    rollup = json.loads(json.dumps(ROLLUP))
    rollup["runs"][0]["energy"] = _energy(8, 0.25, 0.03125)
    rollup["runs"][1]["energy"] = _energy(4, 0.5, 0.0625, valid=False)
    rollup["power"] = {
        "publication_valid": False,
        "status": "complete",
        "required": False,
        "reason_codes": [],
        "missing": None,
        "unknown_later_field": [1, 2],
    }
    rollup["unknown_top_level"] = {"x": 1}
    (run / "benchmark-rollup.json").write_text(json.dumps(rollup))
    data = read_dashboard_data(run, DashboardConfig())
    assert data.energy_source == "benchmark-rollup.json (energy)"
    assert sorted(data.energy) == [4, 8]
    assert data.energy[4].j_per_total_token == 0.0625 and data.energy[4].valid is False
    html = render_dashboard(data)
    rows = re.findall(r"<tr><td>(\d+)</td>.*?</tr>", html)
    assert rows == ["4", "8"]
    assert "<td>0.5000</td><td>0.0625</td><td>310.0</td><td>not valid</td><td>–</td></tr>" in html
    assert "<td>0.2500</td><td>0.0312</td><td>620.0</td><td>valid</td><td>–</td></tr>" in html
    assert "<td>0.1099</td>" not in html  # energy.json is not used when the rollup has energy
    bars = _chart(html, "GPU energy per token (J/token), from benchmark-rollup.json (energy)")
    assert re.findall(r"<title>(J/[a-z]+ token @ \d+: [\d.]+)</title>", bars) == [
        "J/output token @ 4: 0.5",
        "J/total token @ 4: 0.0625",
        "J/output token @ 8: 0.25",
        "J/total token @ 8: 0.03125",
    ]


def test_energy_json_is_the_fallback(tmp_path: Path) -> None:
    data = read_dashboard_data(_run_dir(tmp_path), DashboardConfig())
    assert data.energy_source == "power/energy.json"
    assert data.energy[4].j_per_output_token == 0.1099 and data.energy[4].j_per_total_token is None
    html = render_dashboard(data)
    assert "<td>0.1099</td><td>–</td>" in html


def test_every_reason_code_has_a_plain_explanation() -> None:
    from srt_telemetry.reasons import (
        CPU_REASON_CODES,
        REASON_CODES,
        REASON_TEXT,
        ROLLUP_REASON_CODES,
        explain,
    )

    every = (*REASON_CODES, *CPU_REASON_CODES, *ROLLUP_REASON_CODES)
    assert len(set(every)) == len(every)
    assert set(REASON_TEXT) == set(every)
    for code in every:
        text = REASON_TEXT[code]
        assert text.endswith(".") and code not in text and len(text) < 160, code
    assert explain("no_such_code").startswith("No description")


def test_every_code_the_package_writes_is_in_reasons_py() -> None:
    """The code tables cannot silently miss a code: every literal appended as a reason in the
    power and CPU modules is listed (so it has an explanation too)."""
    from srt_telemetry.reasons import CPU_REASON_CODES, REASON_CODES

    src = Path(__file__).resolve().parents[1] / "src" / "srt_telemetry"
    written: set[str] = set()
    for module in sorted(src.glob("*.py")):
        text = module.read_text()
        written |= set(re.findall(r'(?:reasons|wr|\.reasons)\.append\(\s*"([a-z_]+)"', text))
        written |= set(re.findall(r'"(cpu_power_[a-z_]+)" if', text))
    assert "clock_sync_unverified" in written and "cpu_samples_empty" in written
    assert written <= set(REASON_CODES) | set(CPU_REASON_CODES), written - set(REASON_CODES)


def test_missing_power_is_said_in_plain_words_from_the_rollup(tmp_path: Path) -> None:
    run = tmp_path / "r"
    run.mkdir()
    rollup = json.loads(json.dumps(ROLLUP))
    rollup["power"] = {
        "publication_valid": False,
        "status": None,
        "required": None,
        "reason_codes": [],
        "missing": "power/manifest.json not found: GPU power was not captured",
    }
    (run / "benchmark-rollup.json").write_text(json.dumps(rollup))
    html = render_dashboard(read_dashboard_data(run, DashboardConfig()))
    top = html[: html.index("<h2>Summary</h2>")]
    assert "GPU power numbers are <b>NOT publishable</b>" in top
    assert (
        "<li>GPU power was not captured: power/manifest.json not found: GPU power was not "
        "captured</li>"
    ) in top


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
    # power was not asked for: no power section, columns or warning (issue 31 item 3)
    assert "GPU power" not in html and 'id="power"' not in html
    assert "J/output token" not in html and "window power" not in html
    assert "Not judged: the rollup has no validity verdict" in html


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
                "clock_sync_failures": [{"hostname": "n3", "offset_seconds": 2.25}],
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
    top = html[: html.index("<h2>Summary</h2>")]  # said at the top, before the numbers
    assert "GPU power numbers are <b>NOT publishable</b> (status incomplete)." in top
    assert (
        "<p>Why:</p><ul><li>The run was cancelled or failed, so power collection stopped early. "
        "<code>collector_interrupted</code></li>"
        "<li>node n3: its clock is +2.250 s from the head node&#x27;s</li></ul>"
    ) in top
    assert (
        "<li>sa-bench c=4: not valid<ul><li>Some GPU went more than 3 s without a power sample "
        "inside the window. <code>sample_gap_exceeded</code></li></ul></li>"
    ) in top


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


def test_an_invalid_window_is_hollow_and_labelled_with_its_reason(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    bad = {"verdict": "invalid", "reasons": [{"code": "client_saturated", "detail": "c=16: x"}]}
    rollup = {
        "benchmark_type": "sa-bench",
        "timestamp": "t",
        "config": {"model": "m", "isl": 1, "osl": 1},
        "runs": [
            {"concurrency": 4, "throughput_toks": 100.0, "e2el_mean_ms": 50.0},
            {"concurrency": 16, "throughput_toks": 300.0, "e2el_mean_ms": 90.0, "validity": bad},
        ],
    }
    (run / "benchmark-rollup.json").write_text(json.dumps(rollup))
    html = render_dashboard(read_dashboard_data(run, DashboardConfig(title="t")))
    assert html.count('class="mk invalid" fill="white"') == 1
    assert html.count('class="mk valid"') == 1
    assert ">c=16 invalid: client_saturated</text>" in html
