"""Secrets the user's shell holds are used and never written: a whole real run, end to end.

`srtctl dry-run` and `srtctl apply --local` of the quickstart (real Dynamo frontend and mocker
workers, worker fingerprints, sa-bench) with canary secrets in the environment, reporting to a
real `srtctl status-server` collector (bearer token, every event, log streaming) and a RUN_EVAL
post_eval step that needs a passthrough secret. Afterwards every byte the product wrote or sent
is searched: the job folder (plan, lockfile, fingerprints, logs, status), what both commands
printed, and the collector's database and uploaded logs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from pathlib import Path

import httpx
import pytest
import yaml

from srt_cli.collector import CollectorSettings, Tokens, open_collector

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

CANARIES = {
    "SRTCTL_STATUS_TOKEN": "canary-status-7f3a91d2",
    "HF_TOKEN": "canary-hf-5c6d28e1",
    "AWS_SECRET_ACCESS_KEY": "canary-aws-2b8c44f0",
    "OPENROUTER_API_KEY": "canary-openrouter-9d1e07aa",
    "GH_TOKEN": "canary-gh-0a9b3c55",
    "DYN_AUTH_HEADER": "canary-dyn-auth-61f2",
    "EVAL_SECRET": "canary-eval-83c1b9",
}
#: The eval checks it got EVAL_SECRET (by its prefix, so the value is in no argv).
EVAL = (
    "import os, sys; sys.exit(0 if os.environ.get('EVAL_SECRET', '').startswith('canary-') else 3)"
)


def _recipe(tmp_path: Path, collector: str) -> Path:
    doc = yaml.safe_load((ROOT / "examples" / "quickstart.yaml").read_text())
    doc["reporting"] = {
        "status": {"endpoint": collector, "logging-stream-interval": 0.5},
    }
    doc["post_eval"] = {"command": ["python3", "-c", EVAL], "passthrough_env": ["EVAL_SECRET"]}
    path = tmp_path / "canary.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_real_run_uses_the_secrets_and_writes_none_of_them(tmp_path: Path) -> None:
    srtctl = shutil.which("srtctl")
    assert srtctl is not None, "srtctl is not installed in this environment (make sync)"
    state = tmp_path / "collector"
    settings = CollectorSettings(
        db_path=state / "status.db",
        host="127.0.0.1",
        port=0,
        tokens=Tokens(write=CANARIES["SRTCTL_STATUS_TOKEN"], read=None),
        allow_unauthenticated=False,
        cors_origins=(),
    )
    collector = open_collector(settings, log=lambda _line: None)
    thread = threading.Thread(target=collector.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    env = {**os.environ, **CANARIES, "RUN_EVAL": "true"}
    try:
        recipe = _recipe(tmp_path, collector.url)
        out = tmp_path / "out"
        dry = subprocess.run(
            [srtctl, "dry-run", "-f", str(recipe)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            timeout=120,
            check=False,
        )
        assert dry.returncode == 0, dry.stderr
        assert b"post_eval" in dry.stdout  # RUN_EVAL in the shell: the plan shows the eval
        run = subprocess.run(
            [srtctl, "apply", "--local", "-f", str(recipe), "-o", str(out)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            timeout=300,
            check=False,
        )
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        (job_dir,) = [p for p in out.iterdir() if p.is_dir() and p.name.startswith("local-")]
        record = httpx.get(
            f"{collector.url}/api/jobs/{job_dir.name}",
            headers={"Authorization": f"Bearer {CANARIES['SRTCTL_STATUS_TOKEN']}"},
            timeout=5,
        ).json()
    finally:
        collector.shutdown()
        thread.join(timeout=10)
        collector.close()

    # The secrets were used: the collector accepted the token, the eval saw its variable.
    assert (record["status"], record["exit_code"]) == ("completed", 0)
    assert record["events"][0]["status"] == "submitted"
    streamed = {entry["file"] for entry in record["logs"]}
    assert "benchmark.out" in streamed
    sweep = (job_dir / "logs" / f"sweep_{job_dir.name}.log").read_text()
    assert "post_eval exited with code 0" in sweep
    lock = yaml.safe_load((job_dir / "recipe.lock.yaml").read_text())["lock"]
    assert lock["fingerprints"]["agg_w0"]["env"]["DYN_AUTH_HEADER"] == "<redacted>"

    # ... and written nowhere.
    blobs = {"dry-run stdout": dry.stdout, "dry-run stderr": dry.stderr}
    blobs |= {"apply stdout": run.stdout, "apply stderr": run.stderr}
    blobs |= _files(job_dir) | _files(state)
    assert len(blobs) > 20
    for where, data in blobs.items():
        for name, secret in CANARIES.items():
            assert secret.encode() not in data, f"${name} leaked into {where}"
