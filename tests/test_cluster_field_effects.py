"""Each srtslurm.yaml key below changes what a job runs: the sbatch script or the plan shows it.

A row plans a small recipe (the quickstart, or the quickstart on another engine) with a cluster
file parsed from YAML text as ``srtctl`` parses ``srtslurm.yaml``, once without and once with the
row's keys, on the simulated allocation the golden test uses. The rendered sbatch script plus the
rendered ``plan.json`` must contain the row's needle with the keys and must not without them; a
key the loader or planner ignored fails its row. ``docs/schema-ledger.md`` cites these tests for
its srtslurm.yaml rows; cluster defaults of recipe blocks that are read inside the allocation
(``reporting``, ``cluster``) are checked in the plan the runtime makes inside the allocation.
"""

# ruff: noqa: E501 - the ROWS table reads best as one row per line
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from srt_planner import plan_allocation, plan_job
from srt_planner.sbatch import render_sbatch
from srt_runtime.plan_io import plan_from_job_dir
from srt_schema.clusterconfig import parse_cluster_config
from srt_schema.load import load_recipe_text
from srt_schema.overrides import deep_merge

REPO = Path(__file__).resolve().parents[1]
QUICKSTART: dict[str, Any] = yaml.safe_load((REPO / "examples" / "quickstart.yaml").read_text())
MINIMAL = {"default_account": "acct", "default_partition": "batch"}


def _on(engine: str, roles: dict[str, Any]) -> dict[str, Any]:
    doc = deep_merge(
        copy.deepcopy(QUICKSTART),
        {"model": {"path": "/models/m", "container": "img:1"}, "resources": {"gpus_per_node": 4}},
    )
    doc["engine"] = {"type": engine}
    doc["roles"] = roles
    return doc


def _without_gpus_per_node() -> dict[str, Any]:
    doc = copy.deepcopy(QUICKSTART)
    del doc["resources"]["gpus_per_node"]
    return doc


_DISAGG = {
    "prefill": {"nodes": 1, "workers": 1, "gpus": 4},
    "decode": {"nodes": 1, "workers": 1, "gpus": 4},
}
BASES: dict[str, dict[str, Any]] = {
    "mocker": QUICKSTART,
    "mocker-no-gpn": _without_gpus_per_node(),
    "mocker-alias": deep_merge(
        copy.deepcopy(QUICKSTART), {"model": {"path": "tiny", "container": "dynamo"}}
    ),
    "mocker-dedicated-frontend": deep_merge(
        copy.deepcopy(QUICKSTART), {"frontend": {"placement": {"node": "dedicated"}}}
    ),
    "sglang-nginx": deep_merge(
        _on("sglang", {"agg": {"nodes": 2, "workers": 2, "gpus": 4}}),
        {"frontend": {"enable_multiple_frontends": True, "num_additional_frontends": 1}},
    ),
    "sglang-disagg": _on("sglang", _DISAGG),
    "sglang-two-per-node": _on("sglang", {"agg": {"nodes": 1, "workers": 2, "gpus": 2}}),
    "trtllm-disagg": _on("trtllm", _DISAGG),
}

_SETUP = "{default_host_setup: {commands: [nvidia-smi -lgc 1500]}}"

#: (key, base, cluster keys without, cluster keys with, needle): the needle is in the rendered
#: sbatch script + plan.json with the keys, and absent without them.
ROWS: list[tuple[str, str, str, str, str]] = [
    ("default_account", "mocker", "{}", "{default_account: lab-7}", "#SBATCH --account=lab-7"),
    (
        "default_partition",
        "mocker",
        "{}",
        "{default_partition: gb200}",
        "#SBATCH --partition=gb200",
    ),
    (
        "default_time_limit",
        "mocker",
        "{}",
        "{default_time_limit: '03:30:00'}",
        "#SBATCH --time=03:30:00",
    ),
    (
        "default_sbatch_directives",
        "mocker",
        "{}",
        "{default_sbatch_directives: {qos: high}}",
        "#SBATCH --qos=high",
    ),
    (
        "use_exclusive_sbatch_directive",
        "mocker",
        "{}",
        "{use_exclusive_sbatch_directive: true}",
        "#SBATCH --exclusive",
    ),
    (
        "use_gpus_per_node_directive",
        "mocker",
        "{use_gpus_per_node_directive: false}",
        "{}",
        "#SBATCH --gpus-per-node=2",
    ),
    (
        "use_segment_sbatch_directive",
        "mocker",
        "{use_segment_sbatch_directive: false}",
        "{}",
        "#SBATCH --segment=1",
    ),
    ("use_het_jobs", "sglang-disagg", "{}", "{use_het_jobs: true}", "#SBATCH hetjob"),
    ("gpus_per_node", "mocker-no-gpn", "{}", "{gpus_per_node: 6}", "#SBATCH --gpus-per-node=6"),
    (
        "default_gpu_type",
        "trtllm-disagg",
        "{}",
        "{default_gpu_type: gb200}",
        '"numactl","-m","0,1"',
    ),
    (
        "visible_devices_env",
        "sglang-two-per-node",
        "{}",
        "{visible_devices_env: ROCR_VISIBLE_DEVICES}",
        '"ROCR_VISIBLE_DEVICES":"2,3"',
    ),
    (
        "default_mounts",
        "mocker",
        "{}",
        "{default_mounts: {/lustre/data: /data}}",
        "/lustre/data:/data",
    ),
    (
        "default_bash_preamble",
        "mocker",
        "{}",
        "{default_bash_preamble: ulimit -n 65536}",
        "ulimit -n 65536",
    ),
    (
        "container_runtime",
        "mocker",
        "{}",
        "{container_runtime: none}",
        '"container_runtime":"none"',
    ),
    ("launcher", "mocker", "{}", "{launcher: local}", '"launcher":"local"'),
    (
        "runtime_python",
        "mocker",
        "{container_runtime: none}",
        "{container_runtime: none, runtime_python: /opt/venv}",
        "/opt/venv/bin/python",
    ),
    (
        "nginx_raise_ulimit",
        "sglang-nginx",
        "{}",
        "{nginx_raise_ulimit: true}",
        "worker_rlimit_nofile",
    ),
    (
        "containers",
        "mocker-alias",
        "{}",
        "{containers: {dynamo: nvcr.io#nvidia/dynamo:1.2}}",
        '"image":"nvcr.io#nvidia/dynamo:1.2"',
    ),
    (
        "model_paths",
        "mocker-alias",
        "{}",
        "{model_paths: {tiny: /lustre/models/tiny}}",
        "/lustre/models/tiny:/model",
    ),
    (
        "default_health_check",
        "mocker-no-health",
        "{}",
        "{default_health_check: {max_attempts: 7, interval_seconds: 3}}",
        '"max_attempts":7,"interval_seconds":3.0',
    ),
    ("default_host_setup.commands", "mocker", "{}", _SETUP, '"bash","-c","nvidia-smi -lgc 1500"'),
    (
        "default_host_setup.teardown",
        "mocker",
        "{}",
        "{default_host_setup: {teardown: [nvidia-smi -rgc]}}",
        '"bash","-c","nvidia-smi -rgc"',
    ),
    (
        "default_host_setup.nodes",
        "mocker-dedicated-frontend",
        "{default_host_setup: {commands: [nvidia-smi -lgc 1500], nodes: workers}}",
        _SETUP,
        '"name":"host_setup_node-01"',
    ),
    (
        "default_host_setup.timeout_seconds",
        "mocker",
        _SETUP,
        "{default_host_setup: {commands: [nvidia-smi -lgc 1500], timeout_seconds: 42}}",
        '"timeout_seconds":42.0',
    ),
    (
        "default_gpu_exporter.container_image",
        "mocker",
        "{}",
        "{default_gpu_exporter: {container_image: nvcr.io#site/dcgm:9, port: 9401}}",
        '"image":"nvcr.io#site/dcgm:9"',
    ),
    (
        "default_gpu_exporter.port",
        "mocker",
        "{}",
        "{default_gpu_exporter: {container_image: nvcr.io#site/dcgm:9, port: 9555}}",
        '"--address",":9555"',
    ),
    (
        "default_gpu_exporter.command",
        "mocker",
        "{}",
        "{default_gpu_exporter: {container_image: nvcr.io#site/dcgm:9, port: 9401, command: dcgm-exporter -f /etc/site.csv}}",
        '"argv":["dcgm-exporter","-f","/etc/site.csv"]',
    ),
    (
        "default_gpu_exporter.binary",
        "mocker",
        "{}",
        "{default_gpu_exporter: {container_image: '', port: 9401, binary: /opt/dcgm/bin/dcgm-exporter}}",
        '"argv":["/opt/dcgm/bin/dcgm-exporter","--collect-interval',
    ),
]

BASES["mocker-no-health"] = {k: v for k, v in QUICKSTART.items() if k != "health_check"}


def _plan_and_script(doc: dict[str, Any], keys: str) -> tuple[str, str]:
    cluster = parse_cluster_config(
        yaml.safe_dump(deep_merge(copy.deepcopy(MINIMAL), yaml.safe_load(keys))),
        file="srtslurm.yaml",
    )
    (job,) = load_recipe_text(yaml.safe_dump(doc), file="r.yaml", cluster=cluster)
    request = plan_allocation(job.recipe, cluster, runner_name=None)
    nodes = [f"node-{i:02d}" for i in range(1, request.nodes + 1)]
    addresses = {node: f"10.0.0.{i}" for i, node in enumerate(nodes, start=1)}
    plan = plan_job(job.recipe, cluster, nodes, "1234", addresses=addresses)
    script = render_sbatch(request, output_base="/out", command=("srt-runtime", "run"))
    return msgspec.json.encode(plan).decode(), script


def _render(doc: dict[str, Any], keys: str) -> str:
    plan, script = _plan_and_script(doc, keys)
    return script + "\n" + plan


@pytest.mark.parametrize(
    ("key", "base", "without", "with_key", "needle"), ROWS, ids=[r[0] for r in ROWS]
)
def test_the_cluster_key_changes_the_job(
    key: str, base: str, without: str, with_key: str, needle: str
) -> None:
    assert needle not in _render(BASES[base], without), f"{needle!r} is there without {key}"
    assert needle in _render(BASES[base], with_key), f"{key} did not reach the job"


def test_the_ignore_failure_default_makes_host_setup_not_critical() -> None:
    """``default_host_setup.ignore_failure`` reaches the plan as ``critical: false``."""

    def setup(keys: str) -> dict[str, Any]:
        plan = msgspec.json.decode(_plan_and_script(QUICKSTART, keys)[0])
        [step] = [p for p in plan["processes"] if p["role"] == "host_setup"]
        return step  # type: ignore[no-any-return]

    assert setup(_SETUP)["critical"] is True
    loose = "{default_host_setup: {commands: [nvidia-smi -lgc 1500], ignore_failure: true}}"
    assert setup(loose)["critical"] is False


# -- read inside the allocation: the plan carries the cluster's reporting block and name ----

REPORTING: list[tuple[str, Any]] = [
    ("ai_analysis.enabled", True),
    ("ai_analysis.openrouter_api_key", "sk-or-site"),
    ("ai_analysis.pr_search_days", 3),
    ("ai_analysis.prompt", "look at {log_dir}"),
    ("ai_analysis.repos_to_search", ["ai-dynamo/dynamo"]),
    ("s3.access_key_id", "AKIA-SITE"),
    ("s3.archive", ["logs/*.out"]),
    ("s3.bucket", "site-logs"),
    ("s3.endpoint_url", "http://s3.site:9000"),
    ("s3.exclude", ["*.nsys-rep"]),
    ("s3.prefix", "runs"),
    ("s3.region", "eu-west-1"),
    ("s3.secret_access_key", "site-secret"),
    ("status.endpoint", "http://status.site"),
    ("status.endpoints", ["http://a.site", "http://b.site"]),
    ("status.logging-stream-interval", 7),
    ("status.token_env", "SITE_TOKEN"),
]


def _nest(dotted: str, value: Any) -> dict[str, Any]:
    out: Any = value
    for part in reversed(dotted.split(".")):
        out = {part: out}
    return out  # type: ignore[no-any-return]


def _job_dir(tmp_path: Path, cluster_text: str) -> tuple[Path, dict[str, str]]:
    job_dir = tmp_path / "job"
    job_dir.mkdir(parents=True)
    (job_dir / "config.yaml").write_text(yaml.safe_dump(QUICKSTART))
    config = tmp_path / "srtslurm.yaml"
    config.write_text(cluster_text)
    slurm = {"SLURM_JOB_ID": "1234", "SLURM_JOB_NODELIST": "node-01"}
    return job_dir, {"SRTSLURM_CONFIG": str(config), **slurm}


@pytest.mark.parametrize(("field", "value"), REPORTING, ids=[f for f, _ in REPORTING])
def test_the_cluster_reporting_block_reaches_the_runtime(
    tmp_path: Path, field: str, value: Any
) -> None:
    block = _nest(field, value)
    if "s3" in block:
        block["s3"].setdefault("bucket", "site-logs")  # required next to every s3 key
    job_dir, environ = _job_dir(tmp_path, yaml.safe_dump({"reporting": block} | MINIMAL))
    plan = plan_from_job_dir(job_dir, environ, cwd=tmp_path)
    got: Any = msgspec.to_builtins(plan.reporting)
    for part in field.split("."):
        got = got[part]
    assert (list(got) if isinstance(got, tuple) else got) == value


def test_the_cluster_name_reaches_the_runtime(tmp_path: Path) -> None:
    job_dir, environ = _job_dir(tmp_path, yaml.safe_dump({"cluster": "eos"} | MINIMAL))
    assert plan_from_job_dir(job_dir, environ, cwd=tmp_path).cluster == "eos"
    bare_dir, bare = _job_dir(tmp_path / "bare", yaml.safe_dump(MINIMAL))
    assert plan_from_job_dir(bare_dir, bare, cwd=tmp_path).cluster is None
