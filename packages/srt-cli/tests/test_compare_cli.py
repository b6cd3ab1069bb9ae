"""``srtctl compare`` and ``srtctl report`` over job folders made here (no job runs)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from cli_testkit import Invoke

RUN_FIELDS = [
    "request_throughput",
    "ttft_mean_ms",
    "ttft_p99_ms",
    "tpot_mean_ms",
    "tpot_p99_ms",
    "itl_mean_ms",
    "itl_p99_ms",
    "e2el_mean_ms",
    "completed_requests",
    "total_input_tokens",
    "total_output_tokens",
    "total_token_throughput",
    "ttft_median_ms",
    "tpot_median_ms",
    "itl_median_ms",
]


def _result(rng: random.Random, n: int, ttft_ms: float, itl_ms: float) -> dict[str, Any]:
    out = [rng.randint(50, 64) for _ in range(n)]
    ttfts = [rng.gauss(ttft_ms, ttft_ms / 10) / 1000 for _ in range(n)]
    itls = [[rng.gauss(itl_ms, itl_ms / 10) / 1000 for _ in range(k - 1)] for k in out]
    return {
        "max_concurrency": 4,
        "total_gpus": 2,
        "duration": 2.0,
        "output_lens": out,
        "ttfts": ttfts,
        "itls": itls,
        "e2els": [t + sum(g) for t, g in zip(ttfts, itls, strict=True)],
        "errors": [""] * n,
    }


def _job(
    base: Path, name: str, *, ratio: int, ttft_ms: float, validity: dict[str, Any] | None = None
) -> Path:
    job = base / name
    logs = job / "logs"
    (logs / "sa-bench_isl_128_osl_64").mkdir(parents=True)
    result = _result(random.Random(name), 200, ttft_ms, 1.0)
    path = logs / "sa-bench_isl_128_osl_64" / "results_concurrency_4_gpus_2.json"
    path.write_text(json.dumps(result))
    tokens = sum(result["output_lens"])
    run: dict[str, Any] = dict.fromkeys(RUN_FIELDS, 1.0)
    run.update(concurrency=4, throughput_toks=tokens / 2.0, ttft_median_ms=ttft_ms)
    if validity is not None:
        run["validity"] = validity
    rollup = {
        "benchmark_type": "sa-bench",
        "timestamp": "t",
        "config": {"model": "m", "isl": 128, "osl": 64},
        "runs": [run],
    }
    (logs / "benchmark-rollup.json").write_text(json.dumps(rollup))
    (job / "config.yaml").write_text(
        f"schema: 2\nname: qs\nengine:\n  type: mocker\n  speedup_ratio: {ratio}\n"
    )
    return job


def test_compare_names_the_one_setting_and_prints_deltas_with_intervals(
    tmp_path: Path, invoke: Invoke
) -> None:
    a = _job(tmp_path, "local-a", ratio=10, ttft_ms=10.0)
    b = _job(tmp_path, "local-b", ratio=20, ttft_ms=20.0)
    result = invoke("compare", str(a), str(b), "--html", str(tmp_path / "c.html"))
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "recipe:   one setting differed: engine.speedup_ratio 10 -> 20" in out
    assert "versions: same versions" in out
    [ttft] = [line for line in out.splitlines() if line.strip().startswith("TTFT p50")]
    cells = ttft.split()
    assert cells[-1] == "worse"  # the TTFT doubled: far outside the noise
    assert "[+" in ttft and "%]" in ttft
    assert "95% CI: percentile bootstrap over requests, 1000 resamples, seed 19" in out
    page = (tmp_path / "c.html").read_text()
    assert page.count('class="pt valid"') == 2
    assert "one setting differed: engine.speedup_ratio 10 -&gt; 20" in page
    # issue 31: the chart's legend names the setting that differed, with each run's value, and
    # each point its concurrency
    assert ">local-a: engine.speedup_ratio=10<title>" in page
    assert ">local-b: engine.speedup_ratio=20<title>" in page
    pareto = page.split('class="pareto"', 1)[1].split("</svg>", 1)[0]
    assert pareto.count('class="k">c=4</text>') == 2
    # the runs' curves and distributions on the same axes, each run named by its setting
    assert "Throughput against TTFT p50, run against run" in page
    for metric in ("TTFT", "TPOT", "ITL", "E2EL"):
        assert f'aria-label="{metric} distribution at c=4, run against run"' in page
    # two curves and four distributions, each with one line per run
    assert page.count("<title>engine.speedup_ratio=20</title></polyline>") == 6
    assert page.count("<title>engine.speedup_ratio=10</title></polyline>") == 6
    again = invoke("compare", str(a), str(b))
    assert again.stdout == out.replace(f"html: {tmp_path / 'c.html'}\n", "")  # fixed seed


def test_json_has_the_deltas_and_intervals(tmp_path: Path, invoke: Invoke) -> None:
    a = _job(tmp_path, "local-a", ratio=10, ttft_ms=10.0)
    b = _job(tmp_path, "local-b", ratio=10, ttft_ms=10.0)
    doc = json.loads(invoke("compare", str(a), str(b), "--json").stdout)
    assert doc["baseline"] == "local-a"
    assert doc["runs"][1]["verdict"] == "same recipe: no setting differed"
    [window] = doc["windows"]
    kpis = {k["kpi"]: k for k in window["kpis"]}
    assert set(kpis) >= {
        "output_tok_s",
        "tok_s_per_gpu",
        "ttft_p50_ms",
        "itl_p99_ms",
        "e2el_p99_ms",
    }
    ttft = kpis["ttft_p50_ms"]
    assert ttft["ci_low"] < ttft["delta"] < ttft["ci_high"]
    assert kpis["tok_s_per_gpu"]["baseline"] == kpis["output_tok_s"]["baseline"] / 2


def test_an_invalid_window_is_excluded_and_named(tmp_path: Path, invoke: Invoke) -> None:
    a = _job(tmp_path, "local-a", ratio=10, ttft_ms=10.0)
    bad = {"verdict": "invalid", "reasons": [{"code": "client_saturated", "detail": "lag"}]}
    b = _job(tmp_path, "local-b", ratio=10, ttft_ms=10.0, validity=bad)
    result = invoke("compare", str(a), str(b))
    assert "excluded: local-b concurrency 4: invalid (client_saturated)" in result.stdout
    assert "no concurrency is valid in the baseline and another run: no deltas" in result.stdout


def test_a_sweep_folder_is_every_point(tmp_path: Path, invoke: Invoke) -> None:
    _job(tmp_path, "local-a", ratio=10, ttft_ms=10.0)
    _job(tmp_path, "local-b", ratio=20, ttft_ms=12.0)
    sweep = tmp_path / "sweeps" / "qs-1"
    sweep.mkdir(parents=True)
    points = [
        {
            "index": i,
            "job_name": f"qs_{i}",
            "params": {"ratio": r},
            "configuration": f"ratio={r}",
            "recipe_sha256": "0" * 64,
            "job_id": job_id,
        }
        for i, (job_id, r) in enumerate([("local-a", 10), ("local-b", 20), (None, 40)])
    ]
    record = {"name": "qs-1", "source": "qs.yaml", "created_at": "1", "points": points}
    (sweep / "sweep.json").write_text(json.dumps(record))
    result = invoke("compare", str(sweep), "--resamples", "100")
    assert result.exit_code == 0, result.stderr
    assert "one setting differed: engine.speedup_ratio 10 -> 20" in result.stdout
    assert "missing: qs_2: not started (no job id in sweep.json)" in result.stdout
    report = invoke("report", str(sweep))
    assert report.stdout == f"sweep report: {sweep / 'sweep-report.html'}\n"
    assert 'class="frontier"' in (sweep / "sweep-report.html").read_text()


def test_errors_name_the_path_and_the_fix(tmp_path: Path, invoke: Invoke) -> None:
    a = _job(tmp_path, "local-a", ratio=10, ttft_ms=10.0)
    gone = tmp_path / "nope"
    result = invoke("compare", str(a), str(gone))
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {gone}: no such file or folder; pass job folders (<output>/<job_id>), sweep "
        "folders (<output>/sweeps/<name>) or benchmark-rollup.json files\n"
    )
    one = invoke("compare", str(a))
    assert one.exit_code == 2
    assert one.stderr == (
        "error: compare needs at least two runs with results, found 1; pass two job folders, "
        "or a sweep folder with two finished points\n"
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    report = invoke("report", str(empty))
    assert report.exit_code == 2
    assert report.stderr.startswith(f"error: {empty}: no sweep.json and no job folder")
