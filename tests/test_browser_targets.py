"""The browser tier for declared latency targets (issue 31 item 3): two real local capacity
searches (the quickstart with `benchmark.capacity` targets on TTFT p99 and TPOT p50, mocker
speedup 10 and 20), then the first job's dashboard, the report over both job folders and
`srtctl compare --html` of the two, rendered by headless Chromium at 1400 and 1280 px. Each
target is a labelled dashed line on the charts it fits (srt_telemetry.targets): the TTFT and
TPOT percentile bars, the tok/s-per-user charts (1000 / 15 ms = 66.7 tok/s/user), the report's
TTFT curve; no label overlaps another. Screenshots go to `<output>/screenshots/`. Runs jobs.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from browser import Browser, Node

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"ttft_p99_ms": 200, "tpot_p50_ms": 15}
PER_USER = "target TPOT p50 <= 15 ms = 66.7 tok/s/user"

pytestmark = pytest.mark.slow


def _capacity_job(tmp_path: Path, out: Path, speedup: int) -> Path:
    doc = yaml.safe_load((ROOT / "examples" / "quickstart.yaml").read_text())
    doc["model"]["path"] = str(ROOT / "examples" / "models" / "tiny-word")
    doc["engine"]["speedup_ratio"] = speedup
    doc["benchmark"].pop("concurrencies")
    doc["benchmark"]["capacity"] = {"targets": TARGETS, "max_concurrency": 32, "max_points": 3}
    recipe = tmp_path / f"capacity-{speedup}.yaml"
    recipe.write_text(yaml.safe_dump(doc, sort_keys=False))
    srtctl = shutil.which("srtctl")
    assert srtctl is not None, "srtctl is not installed in this environment (make sync)"
    before = set(out.iterdir()) if out.is_dir() else set()
    done = subprocess.run(
        [srtctl, "apply", "--local", "-f", str(recipe), "-o", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [job] = [p for p in set(out.iterdir()) - before if p.name.startswith("local-")]
    return job


def _targets(chart: Node) -> list[str]:
    """The labels of the target lines drawn in one chart."""
    return sorted(
        t.all_text() for t in chart.iter("text") if "tl" in t.attrs.get("class", "").split()
    )


def _lines(chart: Node) -> int:
    return sum(1 for n in chart.iter("line") if n.attrs.get("class") == "target")


def _chart(charts: dict[str, Node], start: str) -> Node:
    [hit] = [node for title, node in charts.items() if title.startswith(start)]
    return hit


def test_declared_targets_are_labelled_lines_on_the_dashboard_report_and_compare(
    browser: Browser, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    first = _capacity_job(tmp_path, out, 10)
    second = _capacity_job(tmp_path, out, 20)
    shots = out / "screenshots"

    dashboard = browser.render(
        first / "logs" / "perf_dashboard.html", name="capacity-dashboard", save_to=shots
    )
    assert dashboard.problems(charts=["TTFT p50 / p90 / p99 (ms)"]) == []
    charts = dashboard.charts()
    assert _targets(_chart(charts, "TTFT p50 / p90 / p99")) == ["target p99 <= 200 ms"]
    assert _targets(_chart(charts, "TPOT p50 / p90 / p99")) == ["target p50 <= 15 ms"]
    assert _targets(_chart(charts, "ITL p50 / p90 / p99")) == []
    assert _targets(_chart(charts, "Output tok/s per GPU vs tok/s per user")) == [PER_USER]
    assert _lines(_chart(charts, "TTFT p50 / p90 / p99")) == 1

    report_file = out / "report.html"
    built = subprocess.run(
        ["srt-telemetry", "sweep-report", str(out), "--out", str(report_file)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    report = browser.render(report_file, name="capacity-report", save_to=shots)
    assert report.problems(charts=["All points and runs: the Pareto frontier"]) == []
    charts = report.charts()
    assert _targets(_chart(charts, "All points and runs")) == [PER_USER]
    assert _targets(_chart(charts, "Throughput against TTFT p50")) == ["target TTFT p99 <= 200 ms"]
    assert _targets(_chart(charts, "Throughput against mean E2E latency")) == []

    compare = out / "compare.html"
    cmp = subprocess.run(
        ["srtctl", "compare", str(first), str(second), "--html", str(compare)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert cmp.returncode == 0, cmp.stderr
    page = browser.render(compare, name="capacity-compare", save_to=shots)
    assert page.problems(charts=["Every run on one chart: the Pareto frontier"]) == []
    assert _targets(_chart(page.charts(), "Every run on one chart")) == [PER_USER]
    assert len(list(shots.glob("*.png"))) == 6
