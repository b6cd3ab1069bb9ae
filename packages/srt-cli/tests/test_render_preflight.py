"""render --to DIR and preflight through CliRunner."""

from __future__ import annotations

import json
import os
from pathlib import Path

import yaml
from cli_testkit import Invoke

from srt_bench.testing import HubServer


def _with_model(recipe: Path, model: Path) -> Path:
    model.mkdir(parents=True, exist_ok=True)
    recipe.write_text(recipe.read_text().replace("/models/qwen3-0.6b", str(model)))
    return recipe


def test_render_writes_the_three_files(invoke: Invoke, data: Path, tmp_path: Path) -> None:
    recipe = _with_model(data / "mocker-agg.yaml", tmp_path / "model")
    target = tmp_path / "job"
    result = invoke("render", "-f", str(recipe), "--to", str(target), "--set", "name=r1")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == str(target / "sbatch_script.sh")
    assert result.stderr == f"rendered r1 (1 node(s)) into {target}\n"
    script = (target / "sbatch_script.sh").read_text()
    assert script.startswith("#!/bin/bash\n#SBATCH --job-name=r1\n")
    assert f"cp -n {target}/*.yaml" in script
    assert os.access(target / "sbatch_script.sh", os.X_OK)
    assert yaml.safe_load((target / "config.yaml").read_text())["name"] == "r1"
    plan = json.loads((target / "plan.json").read_text())
    assert plan["job_name"] == "r1"
    assert plan["nodes"] == ["node-01"]


def test_render_needs_exactly_one_job(invoke: Invoke, data: Path, tmp_path: Path) -> None:
    result = invoke("render", "-f", str(data / "overrides.yaml"), "--to", str(tmp_path / "x"))
    assert result.exit_code == 2
    assert "render needs exactly one job but" in result.stderr
    assert "gives 3" in result.stderr
    assert not (tmp_path / "x").exists()


def test_render_runs_preflight(invoke: Invoke, data: Path, tmp_path: Path) -> None:
    result = invoke("render", "-f", str(data / "mocker-agg.yaml"), "--to", str(tmp_path / "x"))
    assert result.exit_code == 4
    assert result.stderr.startswith(f"error: preflight failed for {data / 'mocker-agg.yaml'}:\n")
    assert "$.model.path: '/models/qwen3-0.6b' is not a folder" in result.stderr
    skipped = invoke(
        "render", "-f", str(data / "mocker-agg.yaml"), "--to", str(tmp_path / "x"), "--no-preflight"
    )
    assert skipped.exit_code == 0


def test_preflight_reports_each_job(invoke: Invoke, data: Path, tmp_path: Path) -> None:
    good = _with_model(data / "mocker-agg.yaml", tmp_path / "model")
    ok = invoke("preflight", "-f", str(good), "--no-probe")
    assert ok.exit_code == 0
    # srt installs its default Dynamo into the image (dynamo.install), whatever the image's tag
    assert ok.stdout == (
        f"✓ {good}: mocker-agg\n"
        f"  {good}: versions: dynamo-frontend 1.6.1 (the Dynamo release srt installs by "
        "default), catalog dynamo-frontend 1.6.1 (exact)\n"
    )
    bad = invoke("preflight", "-f", str(data / "overrides.yaml:override_two"))
    assert bad.exit_code == 4
    label = f"{data / 'overrides.yaml'}:override_two"
    assert bad.stdout.splitlines()[:2] == [
        f"✗ {label}: ovr_two",
        f"  {label}: $.model.path: '/models/qwen3-0.6b' is not a folder and not a model_paths "
        "alias (no srtslurm.yaml was found, so there are no aliases); give an existing folder, "
        "an alias, or hf:<repo>",
    ]


def test_preflight_unknown_alias(invoke: Invoke, data: Path, tmp_path: Path) -> None:
    (tmp_path / "work" / "srtslurm.yaml").write_text(
        "model_paths:\n  qwen: /nowhere/qwen\ncontainers:\n  dynamo: /images/dynamo.sqsh\n"
    )
    recipe = data / "mocker-agg.yaml"
    text = recipe.read_text().replace("/models/qwen3-0.6b", "qwen")
    recipe.write_text(text.replace("nvcr.io#nvidia/ai-dynamo/sglang-runtime:0.8.0", "dynamoo"))
    result = invoke("preflight", "-f", str(recipe))
    assert result.exit_code == 4
    assert result.stdout.splitlines()[1:3] == [
        f"  {recipe}: $.model.path: alias 'qwen' resolves to '/nowhere/qwen', which is not a "
        "folder on this machine; fix model_paths in srtslurm.yaml or mount the model",
        f"  {recipe}: $.model.container: 'dynamoo' is neither a registry image (name:tag) nor an "
        "existing file, and not a containers alias (did you mean 'dynamo'?)",
    ]


def test_preflight_finds_the_image_file(invoke: Invoke, data: Path, tmp_path: Path) -> None:
    image = tmp_path / "dynamo.sqsh"
    image.write_text("squashfs")
    recipe = _with_model(data / "mocker-agg.yaml", tmp_path / "model")
    recipe.write_text(
        recipe.read_text().replace("nvcr.io#nvidia/ai-dynamo/sglang-runtime:0.8.0", str(image))
    )
    assert invoke("preflight", "-f", str(recipe)).exit_code == 0
    image.unlink()
    assert invoke("preflight", "-f", str(recipe)).exit_code == 4


def test_preflight_native_programs(invoke: Invoke, data: Path, tmp_path: Path) -> None:
    """Container runtime none: every program must be on PATH; critical ones block the job."""
    (tmp_path / "work" / "srtslurm.yaml").write_text("container_runtime: none\n")
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    recipe = _with_model(data / "mocker-agg.yaml", tmp_path / "model")
    recipe.write_text(
        recipe.read_text()
        + "services:\n  - name: extra\n    type: generic\n    command: [no-such-program]\n"
    )
    result = invoke("preflight", "-f", str(recipe), env={"PATH": str(empty)})
    assert result.exit_code == 4
    lines = result.stdout.splitlines()
    assert lines[0] == f"✗ {recipe}: mocker-agg"
    etcd = next(line for line in lines if "service_etcd" in line)
    assert etcd.startswith(f"  {recipe}: service service_etcd: 'etcd' is not on PATH (")
    assert etcd.endswith("); install it or put it there")
    extra = next(line for line in lines if "service_extra" in line)
    assert "'no-such-program' is not on PATH" in extra
    assert extra.endswith("(not critical; the job runs without it)")


def test_local_apply_runs_preflight(invoke: Invoke, data: Path, tmp_path: Path) -> None:
    recipe = data / "hello-service.yaml"
    recipe.write_text(recipe.read_text().replace("hf:example/none", str(tmp_path / "missing")))
    result = invoke("apply", "-f", str(recipe), "--local")
    assert result.exit_code == 4
    assert "preflight failed (nothing was submitted; --no-preflight skips it):" in result.stderr
    assert not (Path.cwd() / "outputs").exists()


def test_preflight_names_a_python_module_the_runtime_cannot_import(
    invoke: Invoke, data: Path, tmp_path: Path
) -> None:
    """Container runtime none: ``python -m X`` processes need X in the runtime interpreter (a
    router or Dynamo module that is not installed is named before the job starts)."""
    (tmp_path / "work" / "srtslurm.yaml").write_text("container_runtime: none\n")
    recipe = _with_model(data / "mocker-agg.yaml", tmp_path / "model")
    recipe.write_text(
        recipe.read_text() + "services:\n  - name: extra\n    type: generic\n"
        "    critical: true\n    command: [python3, -m, srt_no_such_module]\n"
    )
    result = invoke("preflight", "-f", str(recipe))
    assert result.exit_code == 4, result.stdout
    line = next(line for line in result.stdout.splitlines() if "service_extra" in line)
    assert "cannot import 'srt_no_such_module'; install the package that provides it" in line
    # the modules the plan's own processes run (dynamo.mocker, dynamo.frontend) are installed
    assert "cannot import 'dynamo" not in result.stdout


# -- an hf: model is asked of the hub (srt_bench.testing.HubServer on 127.0.0.1) --------------
def _hub_recipe(data: Path, model: str) -> Path:
    recipe = data / f"{model.replace(':', '-').replace('/', '-')}.yaml"
    text = (data / "hello-service.yaml").read_text()
    recipe.write_text(text.replace("hf:example/none", model))
    return recipe


def test_preflight_asks_the_hub_for_an_hf_model(invoke: Invoke, data: Path) -> None:
    tiny = Path(__file__).resolve().parents[3] / "examples" / "models" / "tiny-word"
    with HubServer({"Org/tiny": tiny, "Org/gated": tiny}, gated={"Org/gated": "tok"}) as hub:
        env = {"HF_ENDPOINT": hub.url}
        ok = invoke("preflight", "-f", str(_hub_recipe(data, "hf:Org/tiny")), env=env)
        gated = _hub_recipe(data, "hf:Org/gated")
        refused = invoke("preflight", "-f", str(gated), env=env)
        opened = invoke("preflight", "-f", str(gated), env={**env, "HF_TOKEN": "tok"})
        asked = hub.requests
    assert ok.exit_code == 0, ok.output
    assert ("GET", "/api/models/Org/tiny/revision/main") in asked
    assert refused.exit_code == 4
    assert (
        "$.model.path: cannot fetch the tokenizer of hf:Org/gated from the Hugging Face hub "
        "(HTTP 401, gated repository Org/gated)" in refused.stdout
    )
    assert opened.exit_code == 0, opened.output


def test_preflight_says_when_it_cannot_reach_the_hub(invoke: Invoke, data: Path) -> None:
    with HubServer({}) as hub:
        url = hub.url  # nothing listens there once it is closed
    recipe = _hub_recipe(data, "hf:Org/tiny")
    result = invoke("preflight", "-f", str(recipe), env={"HF_ENDPOINT": url})
    assert result.exit_code == 0, result.output
    assert f"{url} cannot be reached from this machine" in result.stdout
    assert "(not checked; the job's bench_tokenizer step fails first if it is refused)" in (
        result.stdout
    )
