"""migrate and resolve-override through CliRunner."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from cli_testkit import Invoke


def test_migrate_to_stdout_keeps_comments(invoke: Invoke, data: Path) -> None:
    result = invoke("migrate", "-f", str(data / "v1-agg.yaml"))
    assert result.exit_code == 0
    assert result.stdout.startswith("# an old v1 recipe\nschema: 2\nname: old-agg\n")
    assert "engine: sglang\nroles:\n  agg:\n    nodes: 1\n" in result.stdout
    assert result.stderr == (
        f"✓ {data / 'v1-agg.yaml'}: schema 1 -> 2 (folded agg fields into roles.agg, "
        "backend -> engine: sglang, set schema: 2)\n"
    )


def test_migrated_output_dry_runs(invoke: Invoke, data: Path, tmp_path: Path) -> None:
    out = tmp_path / "new" / "agg.yaml"
    result = invoke("migrate", "-f", str(data / "v1-agg.yaml"), "-o", str(out))
    assert result.exit_code == 0
    assert result.stdout.startswith(f"✓ {out}: schema 1 -> 2 (")
    assert invoke("dry-run", "-f", str(out)).exit_code == 0


def test_migrate_in_place_directory(invoke: Invoke, data: Path) -> None:
    result = invoke("migrate", "-f", str(data), "--in-place")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert f"✓ {data / 'mocker-agg.yaml'}: schema 2 -> 2 (already current)" in lines
    assert yaml.safe_load((data / "v1-agg.yaml").read_text())["schema"] == 2
    again = invoke("migrate", "-f", str(data), "--in-place")
    assert all(line.endswith("(already current)") for line in again.stdout.splitlines())


def test_migrate_reports_a_broken_file_and_continues(invoke: Invoke, data: Path) -> None:
    broken = data / "broken.yaml"
    broken.write_text("name: a\nname: b\n")
    result = invoke("migrate", "-f", str(data), "--in-place")
    assert result.exit_code == 2
    assert f"✗ {broken}: not migrated: " in result.stdout
    assert "duplicate key" in result.stdout
    good = len(list(data.glob("*.yaml"))) - 1
    assert result.stdout.endswith(f"\n{good} migrated, 1 not migrated\n")


def test_migrate_flag_errors(invoke: Invoke, data: Path, tmp_path: Path) -> None:
    both = invoke("migrate", "-f", str(data), "--in-place", "-o", str(tmp_path / "x.yaml"))
    assert both.exit_code == 2
    assert both.stderr == "error: choose either --in-place or --output, not both\n"
    many = invoke("migrate", "-f", str(data))
    assert many.exit_code == 2
    count = len(list(data.glob("*.yaml")))
    assert many.stderr == (
        f"error: printing to stdout needs one file; got {count}; use --in-place for many\n"
    )


def test_resolve_override_stdout(invoke: Invoke, data: Path) -> None:
    result = invoke("resolve-override", "-f", str(data / "overrides.yaml"), "--stdout")
    assert result.exit_code == 0, result.output
    chunks = result.stdout.split("# --- ")
    assert [c.split(" ---")[0] for c in chunks[1:]] == ["two", "isl_0", "isl_1"]
    first = yaml.safe_load(chunks[1].split("\n", 1)[1])
    assert first["schema"] == 2
    assert next(iter(first)) == "schema"
    assert first["roles"]["agg"] == {"nodes": 1, "workers": 2, "gpus": 2}


def test_resolve_override_keeps_base_comments_and_order(invoke: Invoke, data: Path) -> None:
    source = f"{data / 'overrides.yaml'}:override_two"
    result = invoke("resolve-override", "-f", source, "--stdout", "--set", "benchmark.osl=64")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "schema: 2"
    assert lines[1].startswith("name: ovr_two ")
    assert lines[1].endswith(" # every variant is named ovr_<suffix>")  # ruamel keeps its column
    assert "  concurrencies: [1]" in lines
    assert "  osl: 64" in lines
    keys = [line.split(":")[0] for line in lines if line and not line.startswith(" ")]
    assert keys == ["schema", "name", "model", "resources", "engine", "roles", "benchmark"]


def test_resolve_override_files_and_set(
    invoke: Invoke, data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    source = data / "overrides.yaml"
    result = invoke("resolve-override", "-f", f"{source}:override_two", "--set", "name=n")
    assert result.exit_code == 0, result.output
    target = here / "overrides_two.yaml"
    assert result.stdout == f"wrote {target}\n"
    assert yaml.safe_load(target.read_text())["name"] == "n"
    assert not (data / "overrides_two.yaml").exists()  # never beside its input


def test_resolve_override_never_writes_beside_a_read_only_input(
    invoke: Invoke, data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    source = corpus / "overrides.yaml"
    source.write_text((data / "overrides.yaml").read_text())
    corpus.chmod(0o555)
    monkeypatch.chdir(tmp_path)
    try:
        result = invoke("resolve-override", "-f", str(source), "-o", "out")
    finally:
        corpus.chmod(0o755)
    assert result.exit_code == 0, result.output
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == ["overrides_isl_0.yaml", "overrides_isl_1.yaml", "overrides_two.yaml"]
    assert sorted(p.name for p in corpus.iterdir()) == ["overrides.yaml"]


def test_resolve_override_refuses_stdout_with_output(invoke: Invoke, data: Path) -> None:
    result = invoke("resolve-override", "-f", str(data / "overrides.yaml"), "--stdout", "-o", "x")
    assert result.exit_code == 2
    assert result.stderr == "error: choose either --stdout or -o/--output, not both\n"


def test_resolve_override_refuses_a_plain_recipe(invoke: Invoke, data: Path) -> None:
    result = invoke("resolve-override", "-f", str(data / "mocker-agg.yaml"), "--stdout")
    assert result.exit_code == 2
    assert "not an override file (it has no top-level `base:`)" in result.stderr
