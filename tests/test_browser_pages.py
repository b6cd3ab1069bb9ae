"""The browser tier: our pages rendered by headless Chromium (tests/browser.py), their charts and
tables checked in the DOM, no overlapping chart labels and no sideways scrolling at 1400 px and
on a 1280 px laptop screen; screenshots saved under each job folder (`screenshots/`).

Pages so far: the per-run dashboard of a real local job (the quickstart: Dynamo frontend, two
mocker workers, the sa-bench client, Tachometer), and of a made-up crowded failed run (twelve
concurrencies, twelve workers, two nodes of GPUs: the layout under pressure). Another page is
one more `browser.render(...)` and `problems(...)` call.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from browser import Browser
from load_dependent import run_codes

from srt_telemetry.testing.fake_run import write_fake_run

ROOT = Path(__file__).resolve().parents[1]

LATENCY_CHARTS = [
    "Throughput vs latency",
    "Output tok/s per GPU vs tok/s per user",
    *(f"{m} p50 / p90 / p99 (ms)" for m in ("TTFT", "TPOT", "ITL", "E2EL")),
    *(f"{m} distribution" for m in ("TTFT", "TPOT", "ITL", "E2EL")),
]
ENGINE_CHARTS = [
    "KV cache usage per worker",
    "Running requests per worker",
    "Running requests per frontend",
    "Waiting requests per worker",
    "Queue depth per worker",
    "Queue depth per frontend",
]


@pytest.mark.slow
def test_the_dashboard_of_a_real_quickstart_job(browser: Browser, tmp_path: Path) -> None:
    srtctl = shutil.which("srtctl")
    assert srtctl is not None, "srtctl is not installed in this environment (make sync)"
    argv = [srtctl, "apply", "--local", "-f", "examples/quickstart.yaml", "-o", str(tmp_path)]
    # a storage folder the dashboard finds from the scrape config; the interval is left unset, so
    # the scraper samples every window densely (issue 31: ten scrapes or more per window)
    argv += ["--set", "observability.tachometer.storage_subdir=engine-metrics"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [job_dir] = [p for p in tmp_path.iterdir() if p.is_dir() and p.name.startswith("local-")]
    assert (job_dir / "logs" / "engine-metrics" / "final.parquet").is_file()
    # the verdict line: valid, or invalid only for what this machine's load earned the client
    # (tests/load_dependent.py), and then the page names the code instead of claiming validity
    codes = run_codes(json.loads((job_dir / "logs" / "benchmark-rollup.json").read_text()))
    verdict = (
        ["Valid: no check found a problem with this run; its numbers can be quoted."]
        if not codes
        else ["Invalid: ", "do not quote these numbers", *sorted(codes)]
    )

    page = browser.render(
        job_dir / "logs" / "perf_dashboard.html", name="dashboard", save_to=job_dir / "screenshots"
    )

    assert (
        page.problems(
            charts=[*LATENCY_CHARTS, *ENGINE_CHARTS],
            tables=["output tok/s", "#latency"],
            text=[
                f"quickstart (job {job_dir.name})",
                "mocker engine (agg × 2 workers) · dynamo frontend · model tiny-word (bf16)",
                "sa-bench ISL 128 / OSL 64 · local launcher",
                "From engine-metrics/final.parquet",
                *verdict,
            ],
        )
        == []
    )
    latency = page.table("#latency")
    assert latency is not None
    rows = [tr for tr in latency.iter("tr") if any(td.tag == "td" for td in tr.children)]
    assert [tr.children[0].all_text() for tr in rows] == ["c=4", "c=16"]
    # issue 31: ITL per chunk, its definition said, p50 > 0 (columns: c, ok, per GPU, per user,
    # TTFT p50/p90/p99, TPOT p50/p90/p99, ITL p50 ...); no power section where none was asked
    body = page.dom.all_text()
    assert "ITL per chunk (ms)" in body and "ITL is per chunk" in body
    for tr in rows:
        assert float(tr.children[10].all_text().replace(",", "")) > 0
    assert "GPU power" not in body and "publishable" not in body
    # the engine section counts the scrapes inside each window and warns exactly when one got
    # fewer than ten (how many a window gets is this machine's speed; tests/test_quickstart.py
    # checks the counts against the Parquet file)
    [scrapes] = [n for n in page.dom.iter("p") if n.attrs.get("id") == "engine-scrapes"]
    counts = scrapes.all_text().split("endpoint): ", 1)[1].split(";", 1)[0]
    assert [part.split(": ")[0] for part in counts.split(", ")] == ["c=4", "c=16"]
    short = any(int(part.split(": ")[1]) < 10 for part in counts.split(", "))
    ids = {n.attrs.get("id") for n in page.dom.iter("p")}
    assert ("engine-scrapes-short" in ids) == short, counts
    assert "diagnosis" not in {n.attrs.get("id") for n in page.dom.iter("div")}
    assert all(p.stat().st_size > 10_000 for p in page.screenshots)


def test_a_crowded_failed_run_renders_cleanly(browser: Browser, tmp_path: Path) -> None:
    job_dir = tmp_path / "4242"
    levels = tuple(2**i for i in range(12))
    write_fake_run(job_dir / "logs", concurrencies=levels, endpoints=12, failed=True)
    built = subprocess.run(
        ["srt-telemetry", "dashboard", str(job_dir / "logs")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr

    page = browser.render(
        job_dir / "logs" / "perf_dashboard.html", name="dashboard", save_to=job_dir / "screenshots"
    )

    assert (
        page.problems(
            charts=[
                *LATENCY_CHARTS,
                "KV cache usage per worker, part 1 of 2",
                "KV cache usage per worker, part 2 of 2",
                "Running requests per frontend",
                "GPU power per GPU, node node-01",
                "GPU power per GPU, node node-02",
            ],
            tables=["output tok/s", "#latency"],
            text=["This run FAILED", "torch.OutOfMemoryError: CUDA out of memory"],
        )
        == []
    )
    body = page.dom.all_text()
    assert body.index("This run FAILED") < body.index("Summary")


def _sweep_job(base: Path, job_id: str, runs: list[tuple[int, float, float, str]]) -> None:
    """A job folder with a rollup: (concurrency, output tok/s, TPOT p50 ms, invalid reason)."""
    logs = base / job_id / "logs"
    (logs / "sa-bench_isl_1_osl_1").mkdir(parents=True)
    rows = []
    for c, tok, tpot, why in runs:
        row: dict[str, object] = {
            "concurrency": c,
            "throughput_toks": tok,
            "tpot_median_ms": tpot,
            "ttft_median_ms": 10.0 * c,
            "e2el_mean_ms": 100.0 * c,
        }
        if why:
            detail = f"c={c}: p99 event-loop lag 84.0 ms > 50 ms"
            row["validity"] = {"verdict": "invalid", "reasons": [{"code": why, "detail": detail}]}
        rows.append(row)
        (logs / "sa-bench_isl_1_osl_1" / f"results_concurrency_{c}_gpus_2.json").write_text("{}")
    doc = {
        "benchmark_type": "sa-bench",
        "timestamp": "t",
        "config": {"model": "m", "isl": 1, "osl": 1},
        "runs": rows,
    }
    (logs / "benchmark-rollup.json").write_text(json.dumps(doc))
    (logs / "perf_dashboard.html").write_text("<html></html>")


def test_a_sweep_report_with_one_invalid_point_draws_it_hollow(
    browser: Browser, tmp_path: Path
) -> None:
    """Issue 31: an invalid point is hollow and labelled with its reason on every chart."""
    _sweep_job(tmp_path, "local-1", [(4, 4000.0, 4.0, ""), (16, 12000.0, 5.0, "")])
    _sweep_job(
        tmp_path,
        "local-2",
        [(4, 5000.0, 3.0, ""), (16, 16000.0, 4.5, "client_saturated"), (64, 30000.0, 8.0, "")],
    )
    built = subprocess.run(
        ["srt-telemetry", "sweep-report", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr

    page = browser.render(
        tmp_path / "sweep-report.html", name="sweep-report", save_to=tmp_path / "screenshots"
    )

    assert (
        page.problems(
            charts=[
                "the Pareto frontier",
                "Throughput against TTFT p50",
                "Throughput against mean E2E latency",
            ],
            tables=["tok/s per GPU"],
            text=["1 invalid: drawn hollow and labelled with their reason"],
        )
        == []
    )
    hollow = [n for n in page.dom.iter("circle") if "invalid" in n.attrs.get("class", "")]
    assert len(hollow) == 3  # the one invalid point on each of the three charts
    assert all(n.attrs.get("fill") in ("none", "white") for n in hollow)
    labels = [n.all_text() for n in page.dom.iter("text")]
    assert labels.count("c=16 invalid: client_saturated") == 3
    assert "c=64" in labels and "c=4" in labels
    assert all(p.stat().st_size > 10_000 for p in page.screenshots)
