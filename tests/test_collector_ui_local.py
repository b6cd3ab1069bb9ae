"""The status collector's pages after real jobs: two local jobs report to a real `srtctl
status-server` process and upload their logs to a real S3-compatible server (moto).

- the quickstart (Dynamo frontend, two mocker workers, sa-bench): `completed`, its job report
  carries the rollup table (per GPU: the two workers' GPUs), the rollup's verdicts, and the
  uploaded files; the dashboard link opens the uploaded dashboard (the bucket lets anyone read,
  as a bucket behind such links must);
- a job whose terminal service prints a traceback and exits 3: `failed`, its report carries the
  diagnosis the runtime wrote, and the link to its log opens the uploaded log.

The JSON API and the HTML the pages show are checked over HTTP; the browser test renders the
list and both job pages in headless Chromium (tests/browser.py) and keeps screenshots under the
quickstart's job folder (`screenshots/`).
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest
import yaml
from browser import Browser
from moto.server import ThreadedMotoServer

ROOT = Path(__file__).resolve().parents[1]
BUCKET = "srt-collector-ui"
PUBLIC_READ = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Principal": "*",
            "Action": "s3:GetObject",
            "Resource": f"arn:aws:s3:::{BUCKET}/*",
        }
    ],
}

pytestmark = pytest.mark.slow

FAILING = (
    "echo starting; echo 'Traceback (most recent call last):'; "
    "echo '  File \"serve.py\", line 7, in <module>'; echo 'RuntimeError: boom' >&2; exit 3"
)


@dataclass
class Reported:
    url: str
    ok: Path
    failed: Path

    def job(self, job_dir: Path) -> dict[str, Any]:
        answer = httpx.get(f"{self.url}/api/jobs/{job_dir.name}", timeout=5.0)
        assert answer.status_code == 200, answer.text
        doc: dict[str, Any] = answer.json()
        return doc

    def page(self, path: str) -> str:
        answer = httpx.get(f"{self.url}{path}", timeout=5.0)
        assert answer.status_code == 200, answer.text
        return answer.text


def _first_line(proc: subprocess.Popen[str], seconds: float) -> str:
    assert proc.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        assert selector.select(timeout=seconds), f"no start-up line within {seconds}s"
    return proc.stdout.readline()


def _reporting(collector: str, s3: str) -> dict[str, Any]:
    return {
        "status": {"endpoint": collector, "logging-stream-interval": 0.5},
        "s3": {"bucket": BUCKET, "endpoint_url": s3, "region": "us-east-1"},
    }


def _apply(recipe: Path, out: Path, env: dict[str, str]) -> Path:
    srtctl = shutil.which("srtctl")
    assert srtctl is not None, "srtctl is not installed in this environment (make sync)"
    argv = [srtctl, "apply", "--local", "-f", str(recipe), "-o", str(out), "--json"]
    done = subprocess.run(
        argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    (record,) = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return Path(record["output_dir"])


@pytest.fixture(scope="module")
def reported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reported]:
    tmp = tmp_path_factory.mktemp("collector-ui")
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    host, port = moto.get_host_and_port()
    s3 = f"http://{host}:{port}"
    keys = {"AWS_ACCESS_KEY_ID": "AKIATESTCOLLECTOR", "AWS_SECRET_ACCESS_KEY": "test-secret"}
    client = boto3.session.Session(
        aws_access_key_id=keys["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=keys["AWS_SECRET_ACCESS_KEY"],
        region_name="us-east-1",
    ).client("s3", endpoint_url=s3)
    client.create_bucket(Bucket=BUCKET)
    # The readers of the page may read the bucket (moto refuses anonymous reads otherwise).
    client.put_bucket_policy(Bucket=BUCKET, Policy=json.dumps(PUBLIC_READ))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SRTCTL_", "AWS_", "SLURM_"))}
    env |= keys
    srtctl = shutil.which("srtctl")
    assert srtctl is not None, "srtctl is not installed in this environment (make sync)"
    server = subprocess.Popen(
        [srtctl, "status-server", "--port", "0", "--db", str(tmp / "db" / "status.db")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = _first_line(server, 30.0)
        url = line.split("listening on ", 1)[1].split(",", 1)[0]
        quick = yaml.safe_load((ROOT / "examples" / "quickstart.yaml").read_text())
        quick["model"]["path"] = str(ROOT / "examples" / "models" / "tiny-word")
        quick["reporting"] = _reporting(url, s3)
        (tmp / "quickstart.yaml").write_text(yaml.safe_dump(quick, sort_keys=False))
        failing = {
            "schema": 2,
            "name": "boom",
            "model": {"path": "hf:example/none", "container": "none", "precision": "bf16"},
            "resources": {"gpus_per_node": 1},
            "frontend": {"type": "none"},
            "benchmark": {"type": "manual"},
            "services": [
                {
                    "name": "boom",
                    "type": "generic",
                    "command": ["bash", "-c", FAILING],
                    "terminal": True,
                    "nodes": 1,
                }
            ],
            "reporting": _reporting(url, s3),
        }
        (tmp / "boom.yaml").write_text(yaml.safe_dump(failing, sort_keys=False))
        ok = _apply(tmp / "quickstart.yaml", tmp / "out", env)
        failed = _apply(tmp / "boom.yaml", tmp / "out", env)
        yield Reported(url=url, ok=ok, failed=failed)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.communicate()
        moto.stop()


def test_a_completed_job_reports_its_results_verdicts_and_uploads(reported: Reported) -> None:
    job = reported.job(reported.ok)
    assert (job["status"], job["exit_code"]) == ("completed", 0)
    report = job["report"]
    assert "diagnosis" not in report
    rollup = json.loads((reported.ok / "logs" / "benchmark-rollup.json").read_text())
    results = report["results"]
    assert (results["benchmark_type"], results["gpus"]) == ("sa-bench", 2)
    # The rollup's table, run by run; the rollup's verdicts as they are, when it has them.
    assert results.get("validity") == rollup.get("validity")
    by_concurrency = {run["concurrency"]: run for run in rollup["runs"]}
    assert [row["concurrency"] for row in results["runs"]] == [4, 16]
    for row in results["runs"]:
        run = by_concurrency[row["concurrency"]]
        assert row["output_tok_s"] == run["throughput_toks"] > 0
        assert row["output_tok_s_per_gpu"] == pytest.approx(run["throughput_toks"] / 2)
        assert (row["ttft_p50_ms"], row["ttft_p99_ms"]) == (
            run["ttft_median_ms"],
            run["ttft_p99_ms"],
        )
        assert (row["itl_p50_ms"], row["itl_p99_ms"]) == (run["itl_median_ms"], run["itl_p99_ms"])
        assert row["completed_requests"] == run["completed_requests"]
        assert row.get("validity") == run.get("validity")
    # The uploads: the dashboard link opens the dashboard the job wrote.
    uploads = report["uploads"]
    assert uploads["url"] == job["logs_url"]
    assert uploads["url"].startswith(f"s3://{BUCKET}/srtslurm/")
    assert uploads["dashboard"] == "perf_dashboard.html"
    assert {"benchmark-rollup.json", "benchmark.out", "node-01_agg_w0.out"} <= set(uploads["files"])
    dashboard = httpx.get(uploads["http_url"] + "perf_dashboard.html", timeout=10.0)
    assert dashboard.status_code == 200
    assert dashboard.content == (reported.ok / "logs" / "perf_dashboard.html").read_bytes()
    # The page shows the table, the verdict section and the link.
    html = reported.page(f"/ui/jobs/{reported.ok.name}")
    assert '<section id="results"><h2>Results</h2>' in html
    assert "per GPU: divided by the 2 GPUs of the workers" in html
    assert '<section id="verdict"><h2>Validity</h2>' in html
    if rollup.get("validity") is not None:
        verdict = rollup["validity"]["verdict"]
        assert f'<span class="verdict {verdict}">{verdict}</span>' in html
    for concurrency in (4, 16):
        assert f"<tr><td>{concurrency}</td>" in html
    assert f'<a href="{uploads["http_url"]}perf_dashboard.html">Open the dashboard</a>' in html
    assert "Why it failed" not in html


def test_a_failed_job_reports_its_diagnosis_and_the_link_to_its_log(reported: Reported) -> None:
    job = reported.job(reported.failed)
    assert (job["status"], job["exit_code"]) == ("failed", 3)
    report = job["report"]
    assert "results" not in report  # a job without a benchmark has no rollup
    written = json.loads((reported.failed / "logs" / "diagnosis.json").read_text())
    diagnosis = report["diagnosis"]
    assert diagnosis == written
    assert (diagnosis["exit_code"], diagnosis["node"]) == (3, "node-01")
    assert diagnosis["log_excerpt"][-1] == "| RuntimeError: boom"
    log_file = diagnosis["log_file"]
    assert log_file in report["uploads"]["files"]
    uploaded_log = httpx.get(report["uploads"]["http_url"] + log_file, timeout=10.0)
    assert uploaded_log.status_code == 200
    assert "RuntimeError: boom" in uploaded_log.text
    # The log was streamed to the collector too, and reads back from it.
    streamed = httpx.get(
        f"{reported.url}/api/jobs/{reported.failed.name}/logs", params={"file": log_file}
    )
    assert "RuntimeError: boom" in streamed.text
    html = reported.page(f"/ui/jobs/{reported.failed.name}")
    assert '<section id="diagnosis"><h2>Why it failed</h2>' in html
    assert f"<tr><th>what failed</th><td>{diagnosis['what']}</td></tr>" in html
    assert "<tr><th>exit code</th><td>3</td></tr>" in html
    assert "| RuntimeError: boom</pre>" in html
    assert f'<a href="{report["uploads"]["http_url"]}{log_file}">in S3</a>' in html
    listing = reported.page("/ui/jobs")
    assert f'<tr class="job status-failed"><td><a href="/jobs/{reported.failed.name}">' in listing
    assert f'<tr class="job status-completed"><td><a href="/jobs/{reported.ok.name}">' in listing


def test_the_pages_in_a_browser(reported: Reported, browser: Browser) -> None:
    shots = reported.ok / "screenshots"
    listing = browser.render(f"{reported.url}/", name="collector-jobs", save_to=shots)
    assert listing.problems(tables=["verdict"], text=["boom", "quickstart"]) == []
    ok = browser.render(
        f"{reported.url}/jobs/{reported.ok.name}", name="collector-ok", save_to=shots
    )
    assert ok.problems(tables=["output tok/s per GPU"], text=["Open the dashboard"]) == []
    failed = browser.render(
        f"{reported.url}/jobs/{reported.failed.name}", name="collector-failed", save_to=shots
    )
    assert failed.problems(text=["Why it failed", "RuntimeError: boom"]) == []
