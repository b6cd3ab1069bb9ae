"""Mistakes a new user makes, each answered by one short message (file, $.path or role, the bad
value, the fix) and no traceback."""

from __future__ import annotations

from pathlib import Path

from cli_testkit import Invoke


def _edit(recipe: Path, old: str, new: str) -> Path:
    text = recipe.read_text()
    assert old in text
    recipe.write_text(text.replace(old, new))
    return recipe


def _one_error(output: str) -> str:
    lines = output.splitlines()
    assert len(lines) == 1, output
    assert "Traceback" not in output
    return lines[0]


def test_misspelled_key(invoke: Invoke, data: Path) -> None:
    recipe = _edit(data / "mocker-agg.yaml", "  gpus_per_node: 4", "  gpus_per_nodes: 4")
    result = invoke("dry-run", "-f", str(recipe))
    assert result.exit_code == 2
    assert _one_error(result.stderr) == (
        f"error: {recipe}: $.resources.gpus_per_nodes: unknown key `gpus_per_nodes`; did you "
        "mean `gpus_per_node`? allowed here: gpu_type, gpus_per_node, spread_workers, het_jobs"
    )


def test_wrong_type(invoke: Invoke, data: Path) -> None:
    recipe = _edit(data / "mocker-agg.yaml", "    workers: 1", "    workers: two")
    result = invoke("dry-run", "-f", str(recipe))
    assert result.exit_code == 2
    assert _one_error(result.stderr) == (
        f"error: {recipe}: $.roles.agg.workers: expected an integer or null, got 'two'"
    )


def test_unknown_alias(invoke: Invoke, data: Path, tmp_path: Path) -> None:
    (tmp_path / "work" / "srtslurm.yaml").write_text("model_paths:\n  qwen3-0.6b: /models/q\n")
    recipe = _edit(data / "mocker-agg.yaml", "/models/qwen3-0.6b", "qwen3")
    dry = invoke("dry-run", "-f", str(recipe))
    assert dry.exit_code == 0
    assert _one_error(dry.stderr) == (
        f"warning: {recipe}: $.model.path: 'qwen3' is not an absolute path, hf:<repo> or a "
        "model_paths alias (did you mean 'qwen3-0.6b'?)"
    )
    check = invoke("preflight", "-f", str(recipe))
    assert check.exit_code == 4
    assert check.stdout.splitlines()[1] == (
        f"  {recipe}: $.model.path: 'qwen3' is not a folder and not a model_paths alias (did "
        "you mean 'qwen3-0.6b'?); give an existing folder, an alias, or hf:<repo>"
    )


def test_role_that_does_not_fit(invoke: Invoke, data: Path) -> None:
    recipe = _edit(data / "mocker-agg.yaml", "    workers: 1", "    workers: 3\n    gpus: 2")
    result = invoke("dry-run", "-f", str(recipe))
    assert result.exit_code == 3
    line = _one_error(result.stderr)
    assert line.startswith(f"error: {recipe}: $.roles.agg: agg ")
    assert "3 worker(s) x 2 GPU(s)" in line
    assert "raise roles.agg.nodes or lower roles.agg.workers" in line


def test_v1_recipe(invoke: Invoke, data: Path) -> None:
    recipe = data / "v1-agg.yaml"
    result = invoke("dry-run", "-f", str(recipe))
    assert result.exit_code == 2
    assert _one_error(result.stderr) == (
        f"error: {recipe}: recipe has no `schema:` key, which marks the pre-2.0 (v1) layout; "
        "schema 1 recipes no longer load. Declare `schema: 2` or run "
        f"`srtctl migrate -f {recipe} --in-place` to rewrite it"
    )
