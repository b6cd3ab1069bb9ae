"""The browser tier for the sweep report and the compare page (tests/browser.py): a real 4-point
local sweep (quickstart with mocker speedup 2 and 5 x concurrency 4 and 16), the report its last
job wrote and `srtctl compare --html` over the sweep, rendered by headless Chromium at 1400 and
1280 px: the charts have data, the tables have rows, no chart label overlaps another, nothing
comes from the network; the compare page overlays the runs' curves and latency distributions,
each run named by the settings that differed. Screenshots go to `<sweep folder>/screenshots/`.
Runs jobs: under the job lock.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from browser import Browser

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def test_the_sweep_report_and_the_compare_page_of_a_real_sweep(
    browser: Browser, tmp_path: Path
) -> None:
    srtctl = shutil.which("srtctl")
    assert srtctl is not None, "srtctl is not installed in this environment (make sync)"
    recipe = yaml.safe_load((ROOT / "examples" / "quickstart.yaml").read_text())
    recipe["model"]["path"] = str(ROOT / "examples" / "models" / "tiny-word")
    recipe["sweep"] = {"ratio": [2, 5], "concurrency": [4, 16]}
    recipe["engine"]["speedup_ratio"] = "{ratio}"
    recipe["benchmark"]["concurrencies"] = ["{concurrency}"]
    path = tmp_path / "qs-sweep.yaml"
    path.write_text(yaml.safe_dump(recipe, sort_keys=False))
    out = tmp_path / "out"
    done = subprocess.run(
        [srtctl, "apply", "--local", "-f", str(path), "-o", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [sweep] = list((out / "sweeps").iterdir())
    compare = sweep / "compare.html"
    cmp = subprocess.run(
        [srtctl, "compare", str(sweep), "--html", str(compare)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert cmp.returncode == 0, cmp.stderr

    report = browser.render(
        sweep / "sweep-report.html", name="sweep-report", save_to=sweep / "screenshots"
    )
    assert (
        report.problems(
            charts=[
                "All points and runs: the Pareto frontier",
                "Throughput against TTFT p50, per configuration",
                "Throughput against mean E2E latency, per configuration",
            ],
            tables=["tok/s per user", "verdict"],
        )
        == []
    )
    page = browser.render(compare, name="compare", save_to=sweep / "screenshots")
    distributions = [
        f"{m} distribution at c={c}, run against run"
        for m in ("TTFT", "TPOT", "ITL", "E2EL")
        for c in (4, 16)
    ]
    assert (
        page.problems(
            charts=[
                "Every run on one chart: the Pareto frontier",
                "Throughput against TTFT p50, run against run",
                "Throughput against E2E latency p50, run against run",
                *distributions,
            ],
            tables=["95% CI of delta"],
            text=["one setting differed: engine.speedup_ratio 2 -> 5"],
        )
        == []
    )
    # issue 31: the runs overlaid on the same axes, each named by the settings that differed
    # (this sweep's points differ in the mocker speedup and the concurrency), not a job id; two
    # whole paths would not fit the legend, so they go by their last segment
    charts = page.charts()
    for title in distributions:
        [chart] = [node for label, node in charts.items() if label.startswith(title)]
        lines = [n for n in chart.iter("polyline")]
        names = sorted(t.all_text() for n in lines for t in n.iter("title"))
        c = title.split("c=")[1].split(",")[0]
        assert names == [f"concurrencies=[{c}], speedup_ratio={r}" for r in (2, 5)], names
    [curve] = [n for t, n in charts.items() if t.startswith("Throughput against TTFT p50, run")]
    legend = {t.all_text() for t in curve.iter("title") if "speedup_ratio=" in t.all_text()}
    assert len(legend) == 4 and not any("local-" in name for name in legend), legend
    assert sum(1 for n in curve.iter("circle") if "mk" in n.attrs.get("class", "")) == 4
    assert len(list((sweep / "screenshots").glob("*.png"))) == 4
