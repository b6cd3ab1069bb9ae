"""validate and dry-run through CliRunner: outputs, --json, overrides, directories, exit codes."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import yaml
from cli_testkit import Invoke

from srt_planner import JobPlan, plan_job
from srt_schema import ClusterConfig, load_recipe_document


def test_validate_prints_nothing_for_a_good_recipe(invoke: Invoke, data: Path) -> None:
    result = invoke("validate", "-f", str(data / "mocker-agg.yaml"))
    assert result.exit_code == 0
    assert result.output == ""


def test_validate_json_directory_one_line_per_file_and_exit_2(invoke: Invoke, data: Path) -> None:
    result = invoke("validate", "-f", str(data), "--json")
    assert result.exit_code == 2
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    by_file = {Path(line["file"]).name: line for line in lines}
    assert by_file["mocker-agg.yaml"] == {
        "file": str(data / "mocker-agg.yaml"),
        "ok": True,
        "jobs": 1,
        "errors": [],
    }
    assert by_file["overrides.yaml"]["jobs"] == 3
    v1 = by_file["v1-agg.yaml"]
    assert v1["ok"] is False
    assert v1["errors"][0]["path"] == "$"
    assert "srtctl migrate" in v1["errors"][0]["message"]


def test_validate_misspelled_key(invoke: Invoke, data: Path) -> None:
    recipe = data / "mocker-agg.yaml"
    recipe.write_text(recipe.read_text().replace("isl: 128", "isll: 128"))
    result = invoke("validate", "-f", str(recipe))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"error: {recipe}: $.benchmark")
    assert "isll" in result.stderr
    assert "Traceback" not in result.output


def test_validate_set_and_unset(invoke: Invoke, data: Path) -> None:
    recipe = str(data / "mocker-agg.yaml")
    bad = invoke("validate", "-f", recipe, "--set", "roles.agg.workers=many")
    assert bad.exit_code == 2
    assert "$.roles.agg.workers" in bad.stderr
    good = invoke("validate", "-f", recipe, "--set", "benchmark.isl=1024", "--unset", "nope.x")
    assert good.exit_code == 0, good.output


def test_bad_set_syntax_is_a_usage_error(invoke: Invoke, data: Path) -> None:
    result = invoke("validate", "-f", str(data / "mocker-agg.yaml"), "--set", "benchmark.isl")
    assert result.exit_code == 2
    assert result.stderr == (
        "error: bad --set/--unset: --set expects KEY=VALUE, got 'benchmark.isl'\n"
    )


def test_missing_file_is_a_usage_error(invoke: Invoke) -> None:
    result = invoke("validate", "-f", "nowhere.yaml")
    assert result.exit_code == 2
    assert result.stderr == "error: -f nowhere.yaml: no such file or directory\n"


def test_stdin_and_selector(invoke: Invoke, data: Path) -> None:
    text = (data / "overrides.yaml").read_text()
    result = invoke("validate", "-f", "-:override_two", "--json", input=text)
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"file": "<stdin>", "ok": True, "jobs": 1, "errors": []}


def test_unknown_selector_names_the_choices(invoke: Invoke, data: Path) -> None:
    result = invoke("validate", "-f", f"{data / 'overrides.yaml'}:override_three")
    assert result.exit_code == 2
    assert "override 'override_three' not found; available: override_two" in result.stderr


def test_planning_error_exits_3(invoke: Invoke, data: Path) -> None:
    recipe = data / "mocker-agg.yaml"
    result = invoke("validate", "-f", str(recipe), "--set", "roles.agg.gpus=8")
    assert result.exit_code == 3
    # the planner's wording is its own (tested there); the CLI names the file and adds nothing
    assert result.stderr.startswith(f"error: {recipe}: $.roles.agg: agg ")
    assert "8 GPU(s)" in result.stderr
    assert "raise roles.agg.nodes" in result.stderr
    assert len(result.stderr.splitlines()) == 1


def _planner_view(recipe: Path, **sets: object) -> JobPlan:
    """The plan srt_planner itself makes for the recipe on node-01 (what dry-run must show)."""
    doc = yaml.safe_load(recipe.read_text())
    doc.update(sets)
    (job,) = load_recipe_document(doc, file=str(recipe))
    log_dir = str(Path.cwd() / "outputs" / "0" / "logs")  # the default output base: ./outputs
    return plan_job(job.recipe, ClusterConfig(), ["node-01"], "0", log_dir=log_dir)


def test_dry_run_shows_script_and_plan(invoke: Invoke, data: Path) -> None:
    recipe = data / "mocker-agg.yaml"
    result = invoke("dry-run", "-f", str(recipe))
    assert result.exit_code == 0, result.output
    out = result.stdout
    plan = _planner_view(recipe)
    assert "cluster config: none (no srtslurm.yaml found; using defaults)" in out
    assert "#SBATCH --job-name=mocker-agg" in out
    assert f"--- plan on node-01 (simulated; {len(plan.processes)} processes) ---" in out
    assert "node-01 (head, infra, bench, workers)" in out
    for spec in plan.processes:
        assert f"] {spec.name} on node-01\n" in out
        assert f"      $ {shlex.join(spec.argv)}\n" in out
    services = out.split("--- services ---\n")[1].split("\n\n")[0].splitlines()[2:]
    expected = [p for p in plan.processes if p.kind in ("service", "telemetry", "proxy")]
    assert [line.split()[0] for line in services] == [p.name for p in expected]
    etcd = next(line for line in services if line.split()[0] == "service_etcd")
    assert etcd.split()[1:5] == ["etcd", "node-01", "infra", "yes"]
    assert etcd.endswith("  frontend.type dynamo")
    assert "built-in  /models/qwen3-0.6b" in out
    assert "health gate: dynamo http://node-01:8000/health" in out


def test_dry_run_is_deterministic(invoke: Invoke, data: Path) -> None:
    first = invoke("dry-run", "-f", str(data / "mocker-agg.yaml"))
    second = invoke("dry-run", "-f", str(data / "mocker-agg.yaml"))
    assert first.stdout == second.stdout


def test_dry_run_every_override_variant(invoke: Invoke, data: Path) -> None:
    result = invoke("dry-run", "-f", str(data / "overrides.yaml"))
    assert result.exit_code == 0, result.output
    headers = [line for line in result.stdout.splitlines() if line.startswith("=== ")]
    source = data / "overrides.yaml"
    assert headers == [
        f"=== [1/3] {source}:override_two: ovr_two ===",
        f"=== [2/3] {source}:zip_override_isl[0]: ovr_isl_0 ===",
        f"=== [3/3] {source}:zip_override_isl[1]: ovr_isl_1 ===",
    ]


def test_dry_run_sweep_shows_every_point(invoke: Invoke, data: Path) -> None:
    recipe = data / "mocker-agg.yaml"
    recipe.write_text(
        recipe.read_text().replace("isl: 128", 'isl: "{isl}"') + "sweep:\n  isl: [128, 256]\n"
    )
    result = invoke("dry-run", "-f", str(recipe))
    assert result.exit_code == 0, result.output
    assert result.stdout.count("sweep point: isl=") == 2


def test_dry_run_json_is_the_plan(invoke: Invoke, data: Path) -> None:
    recipe = data / "mocker-agg.yaml"
    result = invoke("dry-run", "-f", str(recipe), "--json", "--set", "name=x1")
    assert result.exit_code == 0
    plan = json.loads(result.stdout)
    assert plan["job_name"] == "x1"
    assert plan["nodes"] == ["node-01"]
    expected = _planner_view(recipe, name="x1")
    assert [p["name"] for p in plan["processes"]] == [p.name for p in expected.processes]
    assert [p["argv"] for p in plan["processes"]] == [list(p.argv) for p in expected.processes]


def test_dry_run_runner_name(invoke: Invoke, data: Path) -> None:
    result = invoke("dry-run", "-f", str(data / "mocker-agg.yaml"), env={"RUNNER_NAME": "ci-7"})
    assert "#SBATCH --job-name=ci-7" in result.stdout


def test_cluster_config_is_discovered_in_a_parent(
    invoke: Invoke, data: Path, tmp_path: Path, monkeypatch: object
) -> None:
    (tmp_path / "srtslurm.yaml").write_text(
        "default_account: acct\ndefault_partition: gpu\nmodel_paths:\n  qwen: /models/qwen\n"
    )
    recipe = data / "mocker-agg.yaml"
    recipe.write_text(recipe.read_text().replace("/models/qwen3-0.6b", "qwen"))
    result = invoke("dry-run", "-f", str(recipe))
    assert result.exit_code == 0, result.output
    assert f"cluster config: {tmp_path / 'srtslurm.yaml'}" in result.stdout
    assert "#SBATCH --account=acct" in result.stdout
    assert "built-in  /models/qwen " in result.stdout


def test_bad_cluster_config_is_an_error_naming_the_key(
    invoke: Invoke, data: Path, tmp_path: Path
) -> None:
    config = tmp_path / "cluster.yaml"
    config.write_text("default_container: x\n")
    result = invoke(
        "dry-run", "-f", str(data / "mocker-agg.yaml"), env={"SRTSLURM_CONFIG": str(config)}
    )
    assert result.exit_code == 2
    assert "default_container" in result.stderr
    assert str(config) in result.stderr


def test_srtslurm_config_pointing_nowhere(invoke: Invoke, data: Path, tmp_path: Path) -> None:
    missing = tmp_path / "none.yaml"
    result = invoke(
        "validate", "-f", str(data / "mocker-agg.yaml"), env={"SRTSLURM_CONFIG": str(missing)}
    )
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {missing}: SRTSLURM_CONFIG points at a file that does not exist; fix or unset it\n"
    )


def test_dry_run_het_job(invoke: Invoke, data: Path) -> None:
    result = invoke("dry-run", "-f", str(data / "het-disagg.yaml"))
    assert result.exit_code == 0, result.output
    script = result.stdout.split("--- sbatch script ---\n")[1].split("\n\n")[0]
    assert script.count("#SBATCH --nodes=") == 2
    assert "#SBATCH hetjob\n#SBATCH --nodes=2\n" in script
    assert "--- plan on node-[01-03] (simulated;" in result.stdout


def test_dry_run_imports_neither_runtime_nor_bench_nor_telemetry(
    data: Path, tmp_path: Path
) -> None:
    code = (
        "import sys\n"
        "from srt_cli.main import cli\n"
        f"cli.main(['dry-run', '-f', {str(data / 'mocker-agg.yaml')!r}], prog_name='srtctl',"
        " standalone_mode=False)\n"
        "loaded = sorted({m.split('.')[0] for m in sys.modules} & "
        "{'srt_runtime', 'srt_bench', 'srt_telemetry', 'httpx', 'importlib_metadata'})\n"
        "print(loaded, file=sys.stderr)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert out.stderr.strip().splitlines()[-1] == "[]"


def test_dry_run_shows_the_identity_check_and_the_eval_step(invoke: Invoke, data: Path) -> None:
    recipe = str(data / "mocker-agg.yaml")
    plain = invoke("dry-run", "-f", recipe).stdout
    assert "identity check" not in plain and "post_eval" not in plain
    out = invoke(
        "dry-run",
        "-f",
        recipe,
        "--set",
        "identity.model.repo=Qwen/Qwen3-0.6B",
        "--set",
        "identity.frameworks.ai-dynamo=1.6.1",
        env={"RUN_EVAL": "true"},
    ).stdout
    assert (
        "identity check after the health gate: model.repo=Qwen/Qwen3-0.6B, "
        "frameworks.ai-dynamo=1.6.1\n"
    ) in out
    assert "] post_eval on node-01\n" in out
    assert "      $ srt-bench run --config /logs/eval.json\n" in out


def test_every_planning_problem_is_shown_on_its_own_line(invoke: Invoke, data: Path) -> None:
    recipe = data / "het-disagg.yaml"
    result = invoke(
        "dry-run",
        "-f",
        str(recipe),
        "--set",
        "roles.prefill.gpus=8",
        "--set",
        "roles.decode.gpus=16",
    )
    assert result.exit_code == 3
    assert result.stdout == ""
    assert result.stderr == (
        f"error: {recipe}: $.roles.prefill: prefill does not fit: 1 worker(s) x 8 GPU(s) need "
        "more than the 1 node(s) x 4 GPUs of roles.prefill.nodes; raise roles.prefill.nodes or "
        "lower roles.prefill.workers / .gpus\n"
        f"{recipe}: $.roles.decode: decode does not fit: 1 worker(s) x 16 GPU(s) need more than "
        "the 2 node(s) x 4 GPUs of roles.decode.nodes; raise roles.decode.nodes or lower "
        "roles.decode.workers / .gpus\n"
    )


def test_validate_json_lists_every_planning_problem_with_its_path(
    invoke: Invoke, data: Path
) -> None:
    recipe = str(data / "het-disagg.yaml")
    sets = ("--set", "roles.prefill.gpus=8", "--set", "roles.decode.gpus=16")
    result = invoke("validate", "-f", recipe, "--json", *sets)
    assert result.exit_code == 3
    (line,) = [json.loads(text) for text in result.stdout.splitlines()]
    assert [(e["file"], e["path"]) for e in line["errors"]] == [
        (recipe, "$.roles.prefill"),
        (recipe, "$.roles.decode"),
    ]
    assert line["errors"][1]["message"] == (
        "decode does not fit: 1 worker(s) x 16 GPU(s) need more than the 2 node(s) x 4 GPUs "
        "of roles.decode.nodes; raise roles.decode.nodes or lower roles.decode.workers / .gpus"
    )


def test_a_worker_with_no_gpu_is_a_planning_error_exit_3(invoke: Invoke) -> None:
    # An MPI (TRT-LLM) role of 9 workers on 2 nodes x 4 GPUs left each worker 0 GPUs and no node:
    # the packer raised IndexError and dry-run stopped on an internal error (exit 1).
    recipe = Path(__file__).resolve().parents[3] / "tests" / "recipes" / "trtllm-sidecar.yaml"
    result = invoke("dry-run", "-f", str(recipe), "--set", "roles.agg.workers=9")
    assert result.exit_code == 3
    assert result.stderr == (
        f"error: {recipe}: $.roles.agg: 9 agg worker(s) get 0 GPU(s) each (roles.agg.gpus, else "
        "the role's nodes x 4 GPUs per node // its workers); every worker needs at least one "
        "GPU: lower roles.agg.workers, raise roles.agg.nodes, or set roles.agg.gpus\n"
    )
