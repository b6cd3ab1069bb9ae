"""The flag check through ``srtctl validate`` / ``dry-run`` with the shipped catalogs (issue 30)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_testkit import Invoke
from schema_corpus import corpus_present, corpus_root

RECIPE = "NVIDIA/srt-slurm/examples/sglang/sglang-router-disagg.yaml"
#: srtslurm.yaml pinning the recipe's `sglang` alias to an image whose tag says its version.
CLUSTER = (
    "default_account: acct\ndefault_partition: batch\n"
    "containers:\n  sglang: lmsysorg/sglang:v0.5.12-cu130\n"
)


@pytest.fixture
def corpus_recipe(tmp_path: Path) -> Path:
    if not corpus_present():
        pytest.skip("no corpus ($SRT_CORPUS)")
    (Path.cwd() / "srtslurm.yaml").write_text(CLUSTER)
    target = tmp_path / "recipe.yaml"
    target.write_text((corpus_root() / "v2" / RECIPE).read_text())
    return target


def test_a_misspelled_engine_flag_fails_validate_with_version_and_spelling(
    invoke: Invoke, corpus_recipe: Path
) -> None:
    good = invoke("validate", "-f", str(corpus_recipe))
    assert good.exit_code == 0, good.output
    text = corpus_recipe.read_text()
    assert "tensor-parallel-size: 1" in text
    corpus_recipe.write_text(text.replace("tensor-parallel-size: 1", "tensor-paralel-size: 1"))
    bad = invoke("validate", "-f", str(corpus_recipe))
    assert bad.exit_code == 2
    assert (
        "$.roles.prefill.args.tensor-paralel-size: --tensor-paralel-size is not a flag of "
        "sglang 0.5.12 (image lmsysorg/sglang:v0.5.12-cu130)"
    ) in bad.stderr
    assert "did you mean --tensor-parallel-size?" in bad.stderr
    lines = [
        json.loads(line)
        for line in invoke("validate", "-f", str(corpus_recipe), "--json").stdout.splitlines()
    ]
    assert {e["path"] for e in lines[0]["errors"]} == {
        "$.roles.prefill.args.tensor-paralel-size",
        "$.roles.decode.args.tensor-paralel-size",
    }


def test_skip_flag_check_goes_on_and_the_plan_records_it(
    invoke: Invoke, corpus_recipe: Path
) -> None:
    text = corpus_recipe.read_text().replace("tensor-parallel-size: 1", "tensor-paralel-size: 1")
    corpus_recipe.write_text(text)
    assert invoke("validate", "-f", str(corpus_recipe), "--skip-flag-check").exit_code == 0
    skipped = invoke("dry-run", "-f", str(corpus_recipe), "--skip-flag-check", "--json")
    assert skipped.exit_code == 0, skipped.output
    assert json.loads(skipped.stdout.splitlines()[0])["flag_check"] == "skipped"
    corpus_recipe.write_text(text.replace("tensor-paralel-size: 1", "tensor-parallel-size: 1"))
    checked = invoke("dry-run", "-f", str(corpus_recipe), "--json")
    assert json.loads(checked.stdout.splitlines()[0])["flag_check"] == "checked"


def test_an_unpinned_image_warns_naming_the_nearest_catalog(invoke: Invoke, data: Path) -> None:
    recipe = data / "mocker-agg.yaml"
    text = recipe.read_text().replace(
        "type: dynamo\n", "type: dynamo\n  args:\n    router-mode: kv\n"
    )
    recipe.write_text(
        text.replace(
            "container: nvcr.io#nvidia/ai-dynamo/sglang-runtime:0.8.0", "container: dynamo.sqsh"
        )
    )
    result = invoke("validate", "-f", str(recipe))
    assert result.exit_code == 0, result.output
    # dynamo.install (the default) on pyxis: srt installs its default Dynamo release
    assert result.stderr == ""
    result = invoke("validate", "-f", str(recipe), "--set", "dynamo.install=false")
    assert result.exit_code == 0, result.output
    assert "no flag catalog for the dynamo-frontend version (image dynamo.sqsh)" in result.stderr
    assert "checked against the nearest, dynamo-frontend 1.6.1" in result.stderr
