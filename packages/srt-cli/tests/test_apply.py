"""apply against the fake sbatch in tests/fakes, and the local launcher with the real runtime."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest
import yaml
from cli_testkit import FAKES, Invoke


@pytest.fixture
def slurm_env(tmp_path: Path) -> dict[str, str]:
    """PATH with the fake sbatch first; the fake records its calls in FAKE_SBATCH_DIR."""
    return {"PATH": f"{FAKES}:/usr/bin:/bin", "FAKE_SBATCH_DIR": str(tmp_path / "sbatch")}


def _calls(env: dict[str, str]) -> list[dict[str, object]]:
    log = Path(env["FAKE_SBATCH_DIR"]) / "calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def _with_model(recipe: Path, tmp_path: Path) -> Path:
    model = tmp_path / "model"
    model.mkdir(exist_ok=True)
    recipe.write_text(recipe.read_text().replace("/models/qwen3-0.6b", str(model)))
    return recipe


def test_apply_json_one_line_per_variant_and_job_folders(
    invoke: Invoke, data: Path, tmp_path: Path, slurm_env: dict[str, str]
) -> None:
    recipe = _with_model(data / "overrides.yaml", tmp_path)
    out = tmp_path / "out"
    result = invoke(
        "apply", "-f", str(recipe), "--json", "-o", str(out), "--tags", "a, b,,c", env=slurm_env
    )
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["slurm_job_id"] for r in records] == ["4242", "4243", "4244"]
    assert [r["job_name"] for r in records] == ["ovr_two", "ovr_isl_0", "ovr_isl_1"]
    first = records[0]
    assert first == {
        "status": "submitted",
        "slurm_job_id": "4242",
        "job_name": "ovr_two",
        "output_dir": str(out / "4242"),
        "metadata_path": str(out / "4242" / "4242.json"),
        "config_path": str(out / "4242" / "config.yaml"),
        "tags": ["a", "b", "c"],
    }
    assert "submitting ovr_two" in result.stderr
    calls = _calls(slurm_env)
    assert [c["args"][0] for c in calls] == ["--parsable"] * 3
    job = out / "4242"
    assert sorted(p.name for p in job.iterdir()) == [
        "4242.json",
        "config.yaml",
        "logs",
        "recipe.lock.yaml",
        "sbatch_script.sh",
    ]
    assert (job / "logs" / "sweep_4242.log").exists()
    config = (job / "config.yaml").read_text()
    assert yaml.safe_load(config)["roles"]["agg"]["workers"] == 2
    lock = yaml.safe_load((job / "recipe.lock.yaml").read_text())
    assert lock["lock"]["recipe_sha256"] == hashlib.sha256(config.encode()).hexdigest()
    assert lock["lock"]["slurm"]["job_id"] == "4242"
    others = {k: v for k, v in lock["lock"].items() if k != "integrity"}
    digest = hashlib.sha256(yaml.safe_dump(others, sort_keys=True).encode()).hexdigest()
    assert lock["lock"]["integrity"] == digest
    assert lock["name"] == "ovr_two"
    meta = json.loads((job / "4242.json").read_text())
    assert meta["tags"] == ["a", "b", "c"]
    assert meta["job_name"] == "ovr_two"
    submitted = Path(slurm_env["FAKE_SBATCH_DIR"]) / "script_4242.sh"
    assert submitted.read_text() == (job / "sbatch_script.sh").read_text()


def test_apply_text_output_and_set(
    invoke: Invoke, data: Path, tmp_path: Path, slurm_env: dict[str, str]
) -> None:
    recipe = _with_model(data / "mocker-agg.yaml", tmp_path)
    result = invoke("apply", "-f", str(recipe), "-y", "--set", "name=n2", env=slurm_env)
    assert result.exit_code == 0, result.output
    job = Path.cwd() / "outputs" / "4242"
    assert f"job 4242 submitted: {job}\n" in result.stdout
    assert yaml.safe_load((job / "config.yaml").read_text())["name"] == "n2"


def test_apply_json_records_overrides(
    invoke: Invoke, data: Path, tmp_path: Path, slurm_env: dict[str, str]
) -> None:
    recipe = _with_model(data / "mocker-agg.yaml", tmp_path)
    args = ("apply", "-f", str(recipe), "--json", "--set", "benchmark.isl=256", "--unset", "x.y")
    result = invoke(*args, env=slurm_env)
    record = json.loads(result.stdout)
    assert record["applied_overrides"] == ["--set benchmark.isl=256", "--unset x.y"]


def test_sbatch_failure_is_shown_verbatim(
    invoke: Invoke, data: Path, tmp_path: Path, slurm_env: dict[str, str]
) -> None:
    recipe = _with_model(data / "mocker-agg.yaml", tmp_path)
    result = invoke("apply", "-f", str(recipe), env={**slurm_env, "FAKE_SBATCH_FAIL": "1"})
    assert result.exit_code == 4
    lines = result.stderr.splitlines()
    assert lines[-2].startswith(f"error: `{FAKES / 'sbatch'} --parsable ")
    assert lines[-2].endswith("/sbatch_script.sh` failed (exit 1):")
    assert lines[-1] == (
        "sbatch: error: Batch job submission failed: "
        "Invalid account or account/partition combination specified"
    )


def test_sbatch_failure_json_line(
    invoke: Invoke, data: Path, tmp_path: Path, slurm_env: dict[str, str]
) -> None:
    recipe = _with_model(data / "mocker-agg.yaml", tmp_path)
    env = {**slurm_env, "FAKE_SBATCH_FAIL": "1"}
    result = invoke("apply", "-f", str(recipe), "--json", env=env)
    assert result.exit_code == 4
    (record,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert record["status"] == "error"
    assert record["file"] == str(recipe)
    assert "Invalid account" in record["error"]


def test_preflight_blocks_submission(invoke: Invoke, data: Path, slurm_env: dict[str, str]) -> None:
    result = invoke("apply", "-f", str(data / "mocker-agg.yaml"), env=slurm_env)
    assert result.exit_code == 4
    assert "preflight failed (nothing was submitted; --no-preflight skips it):" in result.stderr
    assert _calls(slurm_env) == []
    skipped = invoke("apply", "-f", str(data / "mocker-agg.yaml"), "--no-preflight", env=slurm_env)
    assert skipped.exit_code == 0
    assert len(_calls(slurm_env)) == 1


def test_invalid_recipe_submits_nothing(
    invoke: Invoke, data: Path, slurm_env: dict[str, str]
) -> None:
    result = invoke("apply", "-f", str(data), "--no-preflight", env=slurm_env)
    assert result.exit_code == 2
    assert "v1-agg.yaml" in result.stderr
    valid = [
        json.loads(line)
        for line in invoke("validate", "-f", str(data), "--json").stdout.splitlines()
    ]
    expected = sum(line["jobs"] for line in valid if line["ok"])
    assert expected >= 5
    assert len(_calls(slurm_env)) == expected  # every job of every valid file; none of the v1 file


def test_runner_name_is_the_slurm_job_name(
    invoke: Invoke, data: Path, slurm_env: dict[str, str]
) -> None:
    env = {**slurm_env, "RUNNER_NAME": "ci-runner-3"}
    result = invoke("apply", "-f", str(data / "mocker-agg.yaml"), "--no-preflight", env=env)
    assert result.exit_code == 0
    script = (Path(slurm_env["FAKE_SBATCH_DIR"]) / "script_4242.sh").read_text()
    assert "#SBATCH --job-name=ci-runner-3\n" in script


def test_flag_combinations(invoke: Invoke, data: Path, slurm_env: dict[str, str]) -> None:
    both = invoke("apply", "-f", str(data / "mocker-agg.yaml"), "--local", "--slurm")
    assert both.exit_code == 2
    assert both.stderr == "error: choose either --local or --slurm, not both\n"
    sweep = invoke("apply", "-f", str(data / "mocker-agg.yaml"), "--serve-only", "--sweep")
    assert sweep.stderr == "error: --serve-only does not support sweeps\n"
    many = invoke(
        "apply", "-f", str(data / "overrides.yaml"), "--serve-only", "--no-preflight", env=slurm_env
    )
    assert many.exit_code == 2
    assert "--serve-only requires an override selector that resolves to exactly one job" in (
        many.stderr
    )
    assert _calls(slurm_env) == []


def test_serve_only_reaches_the_script(
    invoke: Invoke, data: Path, slurm_env: dict[str, str]
) -> None:
    args = ("apply", "-f", f"{data / 'overrides.yaml'}:override_two", "--serve-only")
    result = invoke(*args, "--no-preflight", "--json", env=slurm_env)
    assert result.exit_code == 0, result.output
    script = (Path(slurm_env["FAKE_SBATCH_DIR"]) / "script_4242.sh").read_text()
    assert "export SRTCTL_SERVE_ONLY=1\n" in script
    meta = json.loads(Path(json.loads(result.stdout)["metadata_path"]).read_text())
    assert meta["serve_only"] is True


def test_slurm_without_sbatch(invoke: Invoke, data: Path) -> None:
    result = invoke("apply", "-f", str(data / "mocker-agg.yaml"), "--slurm", env={"PATH": "/nope"})
    assert result.exit_code == 4
    assert result.stderr == (
        "error: sbatch is not on PATH; install the Slurm client or pass --local\n"
    )


def test_secrets_never_reach_the_lock(
    invoke: Invoke, data: Path, tmp_path: Path, slurm_env: dict[str, str]
) -> None:
    recipe = _with_model(data / "mocker-agg.yaml", tmp_path)
    recipe.write_text(recipe.read_text() + "environment:\n  HF_TOKEN: hf_secret_value\n")
    result = invoke("apply", "-f", str(recipe), env=slurm_env)
    assert result.exit_code == 0, result.output
    lock = (Path.cwd() / "outputs" / "4242" / "recipe.lock.yaml").read_text()
    assert "hf_secret_value" not in lock
    assert yaml.safe_load(lock)["environment"] == {"HF_TOKEN": "<redacted>"}


def _git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_apply_pins_source_rev(
    invoke: Invoke, data: Path, tmp_path: Path, slurm_env: dict[str, str]
) -> None:
    repo = tmp_path / "dynamo.git"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    (repo / "README").write_text("x")
    _git("add", "README", cwd=repo)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one", cwd=repo)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "tag", "-a", "v1.4.2", "-m", "t", cwd=repo)
    sha = _git("rev-parse", "HEAD", cwd=repo)
    recipe = _with_model(data / "mocker-agg.yaml", tmp_path)
    recipe.write_text(
        recipe.read_text() + f"dynamo:\n  source:\n    git: {repo}\n    rev: v1.4.2\n"
    )
    dry = invoke("dry-run", "-f", str(recipe), env=slurm_env)
    assert dry.exit_code == 0, dry.output
    assert "pinned source" not in dry.output
    result = invoke("apply", "-f", str(recipe), "--json", env=slurm_env)
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["pinned_sources"] == [f"dynamo.source: v1.4.2 -> {sha}"]
    config = yaml.safe_load(Path(record["config_path"]).read_text())
    assert config["dynamo"]["source"] == {"git": str(repo), "rev": "v1.4.2", "sha": sha}
    lock = yaml.safe_load((Path(record["output_dir"]) / "recipe.lock.yaml").read_text())
    assert lock["lock"]["pinned_sources"] == [f"dynamo.source: v1.4.2 -> {sha}"]


def test_unresolvable_rev_warns_and_submits(
    invoke: Invoke, data: Path, tmp_path: Path, slurm_env: dict[str, str]
) -> None:
    recipe = _with_model(data / "mocker-agg.yaml", tmp_path)
    missing = tmp_path / "no-such-repo"
    recipe.write_text(recipe.read_text() + f"dynamo:\n  source:\n    git: {missing}\n    rev: v9\n")
    result = invoke("apply", "-f", str(recipe), "--json", env=slurm_env)
    assert result.exit_code == 0, result.output
    assert "warning: dynamo.source: could not pin rev 'v9' (" in result.stderr
    assert "pinned_sources" not in json.loads(result.stdout)


def test_local_run_with_the_real_runtime(
    invoke: Invoke, data: Path, no_slurm_path: dict[str, str]
) -> None:
    result = invoke("apply", "-f", str(data / "hello-service.yaml"), "--json", env=no_slurm_path)
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[0] == (
        "no sbatch on PATH and no srtslurm.yaml: running the job here (local launcher)"
    )
    (record,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert record["status"] == "finished"
    assert record["exit_code"] == 0
    assert record["job_id"].startswith("local-")
    job = Path(record["output_dir"])
    assert job.parent == Path.cwd() / "outputs"
    plan = json.loads((job / "plan.json").read_text())
    assert plan["launcher"] == "local"
    assert plan["container_runtime"] == "none"
    assert (job / "logs" / "service_hello.out").read_text() == "hello from srt\n"


def test_local_run_failure_exits_4(
    invoke: Invoke, data: Path, no_slurm_path: dict[str, str]
) -> None:
    recipe = data / "hello-service.yaml"
    recipe.write_text(recipe.read_text().replace("echo hello from srt", "exit 7"))
    result = invoke("apply", "-f", str(recipe), "--local", env=no_slurm_path)
    assert result.exit_code == 4
    assert "failed with exit code" in result.stdout


def test_dry_run_shows_the_script_apply_submits(
    invoke: Invoke, data: Path, tmp_path: Path, slurm_env: dict[str, str]
) -> None:
    recipe = _with_model(data / "mocker-agg.yaml", tmp_path)
    dry = invoke("dry-run", "-f", str(recipe), env=slurm_env)
    assert invoke("apply", "-f", str(recipe), env=slurm_env).exit_code == 0
    submitted = (Path(slurm_env["FAKE_SBATCH_DIR"]) / "script_4242.sh").read_text()
    assert submitted.rstrip("\n") in dry.stdout


def test_apply_submits_one_job_per_sweep_point(
    invoke: Invoke, data: Path, tmp_path: Path, slurm_env: dict[str, str]
) -> None:
    recipe = _with_model(data / "mocker-agg.yaml", tmp_path)
    recipe.write_text(
        recipe.read_text().replace("isl: 128", 'isl: "{isl}"') + "sweep:\n  isl: [128, 256]\n"
    )
    result = invoke("apply", "-f", str(recipe), "--json", env=slurm_env)
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["slurm_job_id"] for r in records] == ["4242", "4243"]
    isl = [yaml.safe_load(Path(r["config_path"]).read_text())["benchmark"]["isl"] for r in records]
    assert isl == [128, 256]
