"""srtslurm.yaml keys that only srtctl reads: where jobs go, and whether apply runs preflight.

Each test writes ``srtslurm.yaml`` into the working directory (where srtctl discovers it), runs
``srtctl apply`` against the fake sbatch in tests/fakes, and looks at what was written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_testkit import FAKES, Invoke


@pytest.fixture
def slurm_env(tmp_path: Path) -> dict[str, str]:
    return {"PATH": f"{FAKES}:/usr/bin:/bin", "FAKE_SBATCH_DIR": str(tmp_path / "sbatch")}


def _recipe(data: Path, tmp_path: Path) -> Path:
    model = tmp_path / "model"
    model.mkdir(exist_ok=True)
    recipe = data / "mocker-agg.yaml"
    recipe.write_text(recipe.read_text().replace("/models/qwen3-0.6b", str(model)))
    return recipe


def _apply(invoke: Invoke, recipe: Path, env: dict[str, str]) -> dict[str, str]:
    result = invoke("apply", "-f", str(recipe), "--json", env=env)
    assert result.exit_code == 0, result.output
    record: dict[str, str] = json.loads(result.stdout)
    return record


def test_output_dir_is_where_jobs_go(
    invoke: Invoke, data: Path, tmp_path: Path, slurm_env: dict[str, str]
) -> None:
    recipe = _recipe(data, tmp_path)
    site = tmp_path / "site-outputs"
    (tmp_path / "work" / "srtslurm.yaml").write_text(f"output_dir: {site}\n")
    record = _apply(invoke, recipe, slurm_env)
    assert record["output_dir"] == str(site / "4242")
    assert (site / "4242" / "config.yaml").is_file()
    script = (site / "4242" / "sbatch_script.sh").read_text()
    assert f"#SBATCH --output={site}/%j/logs/sweep_%j.log" in script
    assert not (tmp_path / "work" / "outputs").exists()


def test_srtctl_root_puts_jobs_under_its_outputs(
    invoke: Invoke, data: Path, tmp_path: Path, slurm_env: dict[str, str]
) -> None:
    recipe = _recipe(data, tmp_path)
    root = tmp_path / "srtctl-checkout"
    (tmp_path / "work" / "srtslurm.yaml").write_text(f"srtctl_root: {root}\n")
    record = _apply(invoke, recipe, slurm_env)
    assert record["output_dir"] == str(root / "outputs" / "4242")
    assert (root / "outputs" / "4242" / "config.yaml").is_file()
    assert not (tmp_path / "work" / "outputs").exists()


def test_preflight_false_submits_without_the_checks(
    invoke: Invoke, data: Path, tmp_path: Path, slurm_env: dict[str, str]
) -> None:
    recipe = data / "mocker-agg.yaml"  # its model path /models/qwen3-0.6b is not on this machine
    config = tmp_path / "work" / "srtslurm.yaml"
    config.write_text("preflight: true\n")
    checked = invoke("apply", "-f", str(recipe), "--json", env=slurm_env)
    assert checked.exit_code == 4
    assert "$.model.path: '/models/qwen3-0.6b' is not a folder" in checked.stderr
    config.write_text("preflight: false\n")
    record = _apply(invoke, recipe, slurm_env)
    assert record["status"] == "submitted" and record["slurm_job_id"] == "4242"
