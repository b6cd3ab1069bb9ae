"""The sweep report: the Pareto frontier (pure), and the page over job folders made here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from srt_telemetry.cli import main
from srt_telemetry.errors import DashboardError
from srt_telemetry.pareto import ParetoPoint, pareto_frontier, pareto_svg
from srt_telemetry.sweep_report import write_sweep_report


def _p(x: float, y: float, label: str = "", valid: bool = True) -> ParetoPoint:
    return ParetoPoint(x=x, y=y, series="s", label=label or f"{x},{y}", valid=valid)


def test_the_frontier_keeps_only_points_no_other_point_beats_on_both_axes() -> None:
    points = [_p(10, 100), _p(20, 80), _p(15, 70), _p(30, 40), _p(5, 90), _p(30, 30)]
    frontier = pareto_frontier(points)
    assert [(p.x, p.y) for p in frontier] == [(10, 100), (20, 80), (30, 40)]


def test_invalid_points_never_make_the_frontier_but_are_drawn_hollow() -> None:
    points = [_p(10, 100), _p(50, 500, valid=False), _p(20, 50)]
    assert [(p.x, p.y) for p in pareto_frontier(points)] == [(10, 100), (20, 50)]
    svg = pareto_svg("t", points)
    assert svg.count('class="pt valid"') == 2
    assert svg.count('class="pt invalid"') == 1
    assert 'fill="none" stroke="#1f77b4" data-x="50"' in svg
    assert svg.count('class="frontier"') == 1


def test_an_empty_chart_says_why() -> None:
    assert "no points with both rates" in pareto_svg("t", [])


def _rollup(runs: list[tuple[int, float, float]], validity: dict[str, object] | None = None):
    doc: dict[str, object] = {
        "benchmark_type": "sa-bench",
        "timestamp": "t",
        "config": {"model": "m", "isl": 1, "osl": 1},
        "runs": [
            {
                "concurrency": c,
                "throughput_toks": tok,
                "tpot_median_ms": tpot,
                "ttft_median_ms": 10.0 * c,
                "e2el_mean_ms": 100.0 * c,
            }
            for c, tok, tpot in runs
        ],
    }
    if validity is not None:
        doc["validity"] = validity
    return doc


def _job(base: Path, job_id: str, runs: list[tuple[int, float, float]], **kw: object) -> Path:
    logs = base / job_id / "logs"
    (logs / "sa-bench_isl_1_osl_1").mkdir(parents=True)
    (logs / "benchmark-rollup.json").write_text(json.dumps(_rollup(runs, **kw)))  # type: ignore[arg-type]
    for c, _, _ in runs:
        (logs / "sa-bench_isl_1_osl_1" / f"results_concurrency_{c}_gpus_2.json").write_text("{}")
    (logs / "perf_dashboard.html").write_text("<html></html>")
    return base / job_id


def _sweep(base: Path, points: list[tuple[str | None, str]]) -> Path:
    folder = base / "sweeps" / "qs-20261202T000000Z"
    folder.mkdir(parents=True)
    record = {
        "version": 1,
        "name": folder.name,
        "source": "qs.yaml",
        "created_at": "20261202T000000Z",
        "jobs_base": "../..",
        "points": [
            {
                "index": i,
                "job_name": f"qs_{i}",
                "params": {"i": i},
                "configuration": config,
                "recipe_sha256": "0" * 64,
                "job_id": job_id,
            }
            for i, (job_id, config) in enumerate(points)
        ],
    }
    (folder / "sweep.json").write_text(json.dumps(record))
    return folder


def test_the_page_draws_every_point_the_frontier_the_curves_and_the_validity_table(
    tmp_path: Path,
) -> None:
    _job(tmp_path, "local-1", [(4, 4000.0, 1.0), (16, 12000.0, 2.0)])
    invalid = {
        "verdict": "invalid",
        "reasons": [{"code": "client_saturated", "detail": "concurrency 16: lag 84 ms"}],
    }
    _job(tmp_path, "local-2", [(4, 5000.0, 1.25), (16, 30000.0, 1.0)], validity=invalid)
    (tmp_path / "local-3").mkdir()
    (tmp_path / "local-3" / "status.json").write_text('{"status": "failed", "exit_code": 1}')
    folder = _sweep(
        tmp_path, [("local-1", "ratio=5"), ("local-2", "ratio=20"), ("local-3", "ratio=40")]
    )
    assert main(["sweep-report", str(folder)]) == 0
    html = (folder / "sweep-report.html").read_text()
    # 4 runs with both rates; the run-wide invalid reason makes local-2's windows invalid
    assert html.count('class="pt valid"') == 2
    assert html.count('class="pt invalid"') == 2
    frontier = re.search(r'class="frontier"[^>]*points="([^"]+)"', html)
    assert frontier is not None and len(frontier.group(1).split()) == 2
    assert 'data-x="1000" data-y="2000"' in html  # local-1 c=4: 1000/1 ms, 4000 tok/s / 2 GPUs
    assert "ratio=5" in html and "ratio=20" in html
    assert html.count("<polyline") >= 3  # the frontier and one curve per chart
    assert '<td class="bad verdict">invalid</td><td>client_saturated</td>' in html
    assert "no rollup (job failed, exit 1)" in html
    assert 'href="../../local-1/logs/perf_dashboard.html"' in html
    assert "<script" not in html and "http" not in html.replace("http://www.w3.org", "")
    # issue 31: invalid points are drawn hollow and labelled with their reason on every chart
    # (the Pareto chart and both curves), valid ones with their concurrency
    assert html.count('class="mk invalid" fill="white"') == 4  # 2 runs x 2 curve charts
    assert html.count('class="mk valid"') == 4
    assert html.count(">c=16 invalid: client_saturated</text>") == 3
    assert html.count('class="k bad">c=4 invalid: client_saturated</text>') == 3
    assert '<text x="' in html and 'class="k">c=4</text>' in html
    assert "drawn hollow and labelled with their reason" in html
    again = write_sweep_report(folder)
    assert again.read_text() == html  # deterministic


def test_a_folder_of_job_folders_is_a_sweep_of_one_configuration_per_job(tmp_path: Path) -> None:
    _job(tmp_path, "local-1", [(4, 4000.0, 1.0)])
    _job(tmp_path, "local-2", [(4, 6000.0, 2.0)])
    out = write_sweep_report(tmp_path)
    html = out.read_text()
    assert out == tmp_path / "sweep-report.html"
    assert html.count('class="pt valid"') == 2
    assert 'href="local-2/logs/perf_dashboard.html"' in html


def test_a_folder_without_jobs_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(DashboardError) as caught:
        write_sweep_report(tmp_path)
    assert str(caught.value) == (
        f"{tmp_path}: no sweep.json and no job folder with logs/benchmark-rollup.json below it; "
        "pass <output>/sweeps/<sweep> (written by srtctl apply) or a folder of job folders"
    )
