"""Secrets the user's shell holds are used and never written: a whole real run, end to end.

`srtctl dry-run` and `srtctl apply --local` of the quickstart (real Dynamo frontend and mocker
workers, worker fingerprints, sa-bench) with canary secrets in the environment, in an
`srtslurm.yaml` (the AI-analysis key, a GitHub token, S3 keys: the secret fields of
srt_schema.secrets) and as the password of a URL (`DYN_DISCOVERY_URL`, in the recipe's
`environment` and in the shell). The run reports to a real `srtctl status-server` collector
(bearer token, every event, log streaming) and uploads its logs to a real S3-compatible server
(moto), both named only in `srtslurm.yaml`; a RUN_EVAL post_eval step needs a passthrough
secret; URL passwords sit in sbatch directives of `srtslurm.yaml` and of the recipe (issue 32).
Afterwards every byte the product wrote or sent is searched: every file under the test's folder
but its two inputs (the job folder: config, plan, lockfile, script, fingerprints, logs, status;
the collector's database and uploaded logs), what both commands printed, and every object in the
bucket. The summary line (`canary: ...`) is the issue's canary result.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from pathlib import Path

import boto3
import httpx
import pytest
import yaml
from moto.server import ThreadedMotoServer

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
#: Secrets only srtslurm.yaml holds (every secret field of srt_schema.secrets.SECRET_FIELDS).
CLUSTER_SECRETS = {
    "reporting.ai_analysis.openrouter_api_key": "canary-cluster-openrouter-4be2",
    "reporting.ai_analysis.gh_token": "canary-cluster-gh-77d0",
    "reporting.s3.access_key_id": "AKIACANARY3C5D",
    "reporting.s3.secret_access_key": "canary-cluster-s3-secret-a1f9",
}
#: URL passwords in sbatch directives: srtslurm.yaml's default_sbatch_directives and the
#: recipe's sbatch_directives (issue 32 item 1: they reached sbatch_script.sh, its copy under
#: logs/ and the S3 upload).
CLUSTER_DIRECTIVE_PW = "canary-cluster-directive-3d9e"
RECIPE_DIRECTIVE_PW = "canary-recipe-directive-6b1f"
#: The password of a URL in an ordinary variable (its name says nothing about secrets).
URL_PASSWORD = "canary-url-pw-5e21"
DISCOVERY_URL = f"http://u:{URL_PASSWORD}@127.0.0.1:1"
BUCKET = "srt-canary"
#: The eval checks it got EVAL_SECRET and the recipe's DYN_DISCOVERY_URL with its password (by
#: prefixes, so no value is in any argv): plan.json holds that URL redacted and the eval's env is
#: laid over the inherited one, so this passes only if the runtime put the password back.
EVAL = (
    "import os, sys; e = os.environ.get; sys.exit(0 if e('EVAL_SECRET', '').startswith('canary-')"
    " and e('DYN_DISCOVERY_URL', '').startswith('http://u:canary-url-pw-') else 3)"
)


def _cluster_file(tmp_path: Path, collector: str, s3: str) -> Path:
    """srtslurm.yaml: reporting to the collector and S3, with every secret field set."""
    secrets = CLUSTER_SECRETS
    doc = {
        "default_sbatch_directives": {
            "comment": f"http://ops:{CLUSTER_DIRECTIVE_PW}@hooks.example/"
        },
        "reporting": {
            "status": {"endpoint": collector, "logging-stream-interval": 0.5},
            "ai_analysis": {
                "enabled": True,
                "openrouter_api_key": secrets["reporting.ai_analysis.openrouter_api_key"],
                "gh_token": secrets["reporting.ai_analysis.gh_token"],
            },
            "s3": {
                "bucket": BUCKET,
                "endpoint_url": s3,
                "region": "us-east-1",
                "access_key_id": secrets["reporting.s3.access_key_id"],
                "secret_access_key": secrets["reporting.s3.secret_access_key"],
                "exclude": [],
                "archive": [],  # every object loose, so its bytes can be searched
            },
        },
    }
    path = tmp_path / "srtslurm.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _bucket(s3: str) -> dict[str, bytes]:
    """Every object of the bucket: key -> bytes (moto takes any credentials)."""
    client = boto3.session.Session(
        aws_access_key_id="AKIATESTREADER", aws_secret_access_key="x", region_name="us-east-1"
    ).client("s3", endpoint_url=s3)
    objects: dict[str, bytes] = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET):
        for item in page.get("Contents", ()):
            body = client.get_object(Bucket=BUCKET, Key=item["Key"])["Body"].read()
            objects[f"s3://{BUCKET}/{item['Key']}"] = body
    return objects


def _recipe(tmp_path: Path) -> Path:
    doc = yaml.safe_load((ROOT / "examples" / "quickstart.yaml").read_text())
    doc["environment"] = {"DYN_DISCOVERY_URL": DISCOVERY_URL}
    doc["sbatch_directives"] = {"mail-user": f"https://bot:{RECIPE_DIRECTIVE_PW}@ci.example/"}
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
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    host, port = moto.get_host_and_port()
    s3 = f"http://{host}:{port}"
    boto3.session.Session(
        aws_access_key_id="AKIATESTREADER", aws_secret_access_key="x", region_name="us-east-1"
    ).client("s3", endpoint_url=s3).create_bucket(Bucket=BUCKET)
    cluster = _cluster_file(tmp_path, collector.url, s3)
    env = {
        **os.environ,
        **CANARIES,
        "RUN_EVAL": "true",
        "SRTSLURM_CONFIG": str(cluster),
        "DYN_DISCOVERY_URL": DISCOVERY_URL,
        # a failed run's AI analysis would send the key: only ever to a closed local port
        "SRTCTL_AI_BASE_URL": "http://127.0.0.1:1",
        "SRTCTL_GITHUB_API_URL": "http://127.0.0.1:1",
    }
    try:
        recipe = _recipe(tmp_path)
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
        uploaded = _bucket(s3)
    finally:
        moto.stop()
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
    env_seen = lock["fingerprints"]["agg_w0"]["env"]
    assert env_seen["DYN_AUTH_HEADER"] == "<redacted>"
    assert env_seen["DYN_DISCOVERY_URL"] == "http://u:<redacted>@127.0.0.1:1"
    # srtslurm.yaml's S3 keys were used: the upload went through with them.
    assert f"s3://{BUCKET}/srtslurm/" in run.stdout.decode() + sweep
    assert any(key.endswith("/benchmark.out") for key in uploaded), sorted(uploaded)
    # config.yaml says where each secret is instead of holding it.
    config = yaml.safe_load((job_dir / "config.yaml").read_text())
    assert config["reporting"]["ai_analysis"]["openrouter_api_key"] == (
        "<redacted: set OPENROUTER_API_KEY in the environment or "
        "reporting.ai_analysis.openrouter_api_key in srtslurm.yaml>"
    )
    assert config["environment"]["DYN_DISCOVERY_URL"] == "http://u:<redacted>@127.0.0.1:1"

    # ... and written nowhere.
    blobs = {"dry-run stdout": dry.stdout, "dry-run stderr": dry.stderr}
    blobs |= {"apply stdout": run.stdout, "apply stderr": run.stderr}
    # every file under the test's folder but its two inputs: the job folder, the staging and
    # stand-in folders of the output, the collector's database and uploads
    inputs = {str(cluster), str(recipe)}
    blobs |= {k: v for k, v in _files(tmp_path).items() if k not in inputs} | uploaded
    assert len(blobs) > 20
    # the scratch folder was removed at the end (issue 32 item 6)
    assert not (job_dir / "logs" / "scratch").exists()
    script = (job_dir / "sbatch_script.sh").read_text()
    assert "--comment=http://ops:<redacted>@hooks.example/" in script
    assert "--mail-user=https://bot:<redacted>@ci.example/" in script
    secrets = {f"${k}": v for k, v in CANARIES.items()} | CLUSTER_SECRETS
    secrets["the DYN_DISCOVERY_URL password"] = URL_PASSWORD
    secrets["srtslurm.yaml's directive password"] = CLUSTER_DIRECTIVE_PW
    secrets["the recipe's directive password"] = RECIPE_DIRECTIVE_PW
    holding = sorted(
        w for w, data in blobs.items() if any(s.encode() in data for s in secrets.values())
    )
    print(
        f"canary: {len(secrets)} secrets, {len(blobs)} files/outputs/objects searched, "
        f"{len(holding)} hold a canary"
    )
    for where, data in blobs.items():
        for name, secret in secrets.items():
            assert secret.encode() not in data, f"{name} leaked into {where}"
