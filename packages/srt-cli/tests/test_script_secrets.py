"""Issue 32 item 1: a credential in an sbatch directive (srtslurm.yaml's
``default_sbatch_directives`` or the recipe's ``sbatch_directives``) reaches
sbatch, and no file srt writes (the staged script, the job folder's script and its copy under
``logs/``, which the S3 upload takes) nor anything it prints holds it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from cli_testkit import FAKES, Invoke

CLUSTER_PW = "canary-cluster-directive-5d1e"
RECIPE_PW = "canary-recipe-directive-8a2c"


@pytest.fixture
def slurm_env(tmp_path: Path) -> dict[str, str]:
    return {"PATH": f"{FAKES}:/usr/bin:/bin", "FAKE_SBATCH_DIR": str(tmp_path / "sbatch")}


def _setup(data: Path, tmp_path: Path) -> Path:
    model = tmp_path / "model"
    model.mkdir(exist_ok=True)
    doc = yaml.safe_load((data / "mocker-agg.yaml").read_text())
    doc["model"]["path"] = str(model)
    doc["sbatch_directives"] = {"comment": f"https://bot:{RECIPE_PW}@ci.example/run/1"}
    recipe = tmp_path / "work" / "secret.yaml"
    recipe.write_text(yaml.safe_dump(doc))
    cluster = {
        "default_account": "acct",
        "default_partition": "batch",
        "default_sbatch_directives": {"mail-user": f"http://ops:{CLUSTER_PW}@hooks.example/"},
    }
    (tmp_path / "work" / "srtslurm.yaml").write_text(yaml.safe_dump(cluster))
    return recipe


def _holding(folder: Path, secrets: tuple[str, ...]) -> list[str]:
    return [
        str(p)
        for p in folder.rglob("*")
        if p.is_file() and any(s.encode() in p.read_bytes() for s in secrets)
    ]


SECRETS = (CLUSTER_PW, RECIPE_PW)


def test_a_credential_in_a_directive_reaches_sbatch_and_no_file(
    invoke: Invoke, data: Path, tmp_path: Path, slurm_env: dict[str, str]
) -> None:
    recipe = _setup(data, tmp_path)
    out = tmp_path / "out"
    result = invoke("apply", "-f", str(recipe), "--json", "-o", str(out), env=slurm_env)
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    submitted = (tmp_path / "sbatch" / f"script_{record['slurm_job_id']}.sh").read_text()
    # sbatch got the real script, on its stdin (no script path among its arguments)
    for secret in SECRETS:
        assert secret in submitted
    calls = (tmp_path / "sbatch" / "calls.jsonl").read_text().splitlines()
    (call,) = [json.loads(line) for line in calls]
    assert not any(arg.endswith(".sh") for arg in call["args"]), call
    job = Path(record["output_dir"])
    script = (job / "sbatch_script.sh").read_text()
    assert "--comment=https://bot:<redacted>@ci.example/run/1" in script
    assert "--mail-user=http://ops:<redacted>@hooks.example/" in script
    # the output folder (the staged script, the job folder, logs/) holds none; Slurm's copy does
    assert (out / ".staging").is_dir()
    assert _holding(out, SECRETS) == []
    assert not any(s in result.output for s in SECRETS)


def test_dry_run_and_render_print_and_write_no_credential(
    invoke: Invoke, data: Path, tmp_path: Path
) -> None:
    recipe = _setup(data, tmp_path)
    dry = invoke("dry-run", "-f", str(recipe))
    assert dry.exit_code == 0, dry.output
    assert "--comment=https://bot:<redacted>@ci.example/run/1" in dry.stdout
    assert not any(s in dry.output for s in SECRETS)
    rendered = invoke("render", "-f", str(recipe), "--to", str(tmp_path / "r"), "--no-preflight")
    assert rendered.exit_code == 0, rendered.output
    assert "sbatch_script.sh has it as <redacted>" in rendered.stderr
    assert _holding(tmp_path / "r", SECRETS) == []


def test_every_printed_line_goes_through_the_redactor(tmp_path: Path) -> None:
    """The real `srtctl` (its stdout and stderr are wrapped once in main): a secret of the
    environment printed under another name, and a URL password in a warning, are redacted."""
    import os
    import shutil
    import subprocess
    import sys

    srtctl = shutil.which("srtctl", path=str(Path(sys.executable).parent)) or "srtctl"
    doc = yaml.safe_load((FAKES.parent / "data" / "mocker-agg.yaml").read_text())
    doc["environment"] = {"PLAIN_NAME": "canary-env-value-77aa"}
    (tmp_path / "r.yaml").write_text(yaml.safe_dump(doc))
    doc["model"]["container"] = f"http://u:{RECIPE_PW}@registry.example/img"
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(doc))

    def dry_run(name: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [srtctl, "dry-run", "-f", name],
            cwd=tmp_path,
            env={**os.environ, "HF_TOKEN": "canary-env-value-77aa"},
            capture_output=True,
            text=True,
            check=False,
            timeout=120,  # hang guard
        )

    done = dry_run("r.yaml")
    assert done.returncode == 0, done.stderr
    assert "PLAIN_NAME" in done.stdout and "<redacted>" in done.stdout
    assert "canary-env-value-77aa" not in done.stdout + done.stderr
    # a credential in free text is refused (the job would get <redacted>), and not echoed
    refused = dry_run("bad.yaml")
    assert refused.returncode == 2
    assert "$.model.container: 'http://u:<redacted>@registry.example/img' holds a credential" in (
        refused.stderr
    )
    assert RECIPE_PW not in refused.stdout + refused.stderr
