"""The plan is the whole truth: a run reports from ``plan.json`` alone.

``python -m srt_runtime run --plan plan.json`` in a job folder with no ``config.yaml``, started
from a folder with no ``srtslurm.yaml`` and without ``SRTSLURM_CONFIG``: the status collector the
plan names still gets every update, the first one describing the run from the plan's summary and
cluster name, the last one the outcome. Secrets: ``plan.json`` holds markers, the runtime takes
the value from the variable the marker names.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec
from rep_collector import running_collector
from rt_plans import fake, plan, spec

from srt_planner.plan import RunSummary
from srt_runtime.plan_io import read_plan, write_plan
from srt_runtime.reporting.session import resolve_secret_markers
from srt_schema.recipe import AIAnalysisConfig, ReportingConfig, ReportingStatusConfig, S3Config
from srt_schema.secrets import secret_field_environment, secret_marker

SUMMARY = RunSummary(
    model_path="/models/tiny",
    precision="bf16",
    gpu_type="h100",
    gpus_per_node=8,
    workers={"agg_workers": 1},
    benchmark_type="sa-bench",
    backend_type="mocker",
    frontend_type="dynamo",
)
SECRETS = ReportingConfig(
    ai_analysis=AIAnalysisConfig(enabled=True, openrouter_api_key="k-1", gh_token="g-2"),
    s3=S3Config(bucket="b", access_key_id="AKIA-3", secret_access_key="s-4"),
)


def test_a_run_reports_from_plan_json_with_no_recipe_and_no_cluster_file(
    job_dir: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"  # the cwd: no srtslurm.yaml to discover
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "SRTSLURM_CONFIG"}
    with running_collector() as (collector, state):
        job_plan = plan(
            spec("benchmark", fake("say", "result 42"), kind="benchmark", phase="benchmark"),
            reporting=ReportingConfig(status=ReportingStatusConfig(endpoint=collector)),
            cluster="lab",
            summary=SUMMARY,
        )
        plan_file = tmp_path / "input-plan.json"
        write_plan(job_plan, plan_file)
        argv = [sys.executable, "-m", "srt_runtime", "run", "--job-dir", str(job_dir)]
        done = subprocess.run(
            [*argv, "--plan", str(plan_file)],
            cwd=elsewhere,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        puts = [json.loads(r.body) for r in state.of("PUT", "/api/jobs/4242")]
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (job_dir / "config.yaml").exists()
    assert not list(elsewhere.iterdir())
    assert (puts[0]["status"], puts[0]["metadata"]["cluster"]) == ("starting", "lab")
    assert puts[0]["metadata"]["model"] == {"path": "/models/tiny", "precision": "bf16"}
    assert puts[0]["metadata"]["resources"]["agg_workers"] == 1
    assert puts[0]["metadata"]["backend_type"] == "mocker"
    assert (puts[-1]["status"], puts[-1]["stage"], puts[-1]["exit_code"]) == (
        "completed",
        "cleanup",
        0,
    )


def test_plan_json_holds_markers_and_the_runtime_reads_their_variables(tmp_path: Path) -> None:
    job_plan = plan(reporting=SECRETS)
    path = tmp_path / "plan.json"
    write_plan(job_plan, path)
    written = json.loads(path.read_text())["reporting"]
    assert written["s3"]["access_key_id"] == secret_marker(("reporting", "s3", "access_key_id"))
    for value in ("k-1", "g-2", "AKIA-3", "s-4"):
        assert value not in path.read_text()
    resolved = resolve_secret_markers(read_plan(path, {}).reporting)
    assert resolved is not None and resolved.s3 is not None and resolved.ai_analysis is not None
    # unset, so the uploader and the analysis read AWS_ACCESS_KEY_ID, OPENROUTER_API_KEY, ...
    assert (resolved.s3.access_key_id, resolved.s3.secret_access_key) == (None, None)
    assert (resolved.ai_analysis.openrouter_api_key, resolved.ai_analysis.gh_token) == (None, None)
    assert resolved.s3.bucket == "b" and resolved.ai_analysis.enabled
    # a value the plan holds (planned in memory from srtslurm.yaml) is kept
    assert resolve_secret_markers(SECRETS) == SECRETS


def test_srtctl_hands_each_secret_field_to_the_job_in_the_variable_its_marker_names() -> None:
    doc = {"reporting": msgspec.to_builtins(SECRETS)}
    assert secret_field_environment(doc) == {
        "OPENROUTER_API_KEY": "k-1",
        "GH_TOKEN": "g-2",
        "AWS_ACCESS_KEY_ID": "AKIA-3",
        "AWS_SECRET_ACCESS_KEY": "s-4",
    }
    marker = secret_marker(("reporting", "s3", "access_key_id"))
    redacted = {"reporting": {"s3": {"access_key_id": marker}}}
    assert secret_field_environment(redacted) == {}
