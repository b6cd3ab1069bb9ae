"""The shared corpus through the CLI: every schema-valid v2 recipe passes ``srtctl dry-run``;
every v1 recipe passes ``srtctl migrate`` and its output passes ``srtctl dry-run``, apart from
the exception tables srt-schema keeps (read from its test files, not copied here).

Corpus: ``$SRT_CORPUS``, default ``<repo>/../shared/corpus``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_testkit import REPO, Invoke
from schema_corpus import corpus_present, corpus_root, or_absent

# ~160 files through the CLI; the fast tier skips it
pytestmark = [pytest.mark.slow, pytest.mark.corpus]

SCHEMA_TESTS = REPO / "packages" / "srt-schema" / "tests"
MIGRATION_EXCEPTIONS = SCHEMA_TESTS / "data" / "migrate" / "expected_failures.yaml"

# Schema-valid v2 files that load but that the planner cannot lay out, with its message. These
# use frontend types outside the recipe schema's list (Q13); srt-schema should refuse them at
# load time (then they belong in its REFUSED table and leave this one).
PLANNER_REFUSES: dict[str, str] = {
    # Features the planner refuses clearly because it does not plan them yet; they leave this
    # table when srt-planner learns them.
}


def _schema_corpus_tables() -> Any:
    """srt-schema's tests/test_corpus.py, loaded by path (it is not importable by name)."""
    spec = importlib.util.spec_from_file_location(
        "srt_schema_corpus", SCHEMA_TESTS / "test_corpus.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _index(layout: str) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    if not corpus_present():
        return rows
    for line in (corpus_root() / "INDEX.md").read_text().splitlines():
        if line.startswith(f"| {layout} |"):
            cols = [c.strip() for c in line.split("|")]
            rows.append((f"{cols[2]}/{cols[3]}", cols[10].split(":")[0]))
    return rows


def _v2_dry_run_files() -> list[str]:
    tables = _schema_corpus_tables()
    return [
        rel
        for rel, valid in _index("v2")
        if rel not in tables.REFUSED and (valid == "yes" or rel in tables.LOADS_DESPITE_INDEX)
    ]


def _v1_files() -> list[str]:
    root = corpus_root() / "v1"
    return sorted(
        p.relative_to(root).as_posix() for p in root.rglob("*") if p.suffix in (".yaml", ".yml")
    )


def test_tables_name_real_files() -> None:
    assert set(PLANNER_REFUSES) <= set(_v2_dry_run_files())
    exceptions = yaml.safe_load(MIGRATION_EXCEPTIONS.read_text())
    assert set(exceptions) <= set(_v1_files())


@pytest.mark.parametrize("rel", or_absent(_v2_dry_run_files()))
def test_v2_recipe_dry_runs(invoke: Invoke, rel: str) -> None:
    result = invoke("dry-run", "-f", str(corpus_root() / "v2" / rel))
    if rel in PLANNER_REFUSES:
        assert result.exit_code == 3, result.output
        assert PLANNER_REFUSES[rel] in result.stderr
        return
    assert result.exit_code == 0, result.stderr
    assert "--- plan on node-" in result.stdout


@pytest.mark.parametrize("rel", or_absent(_v1_files()))
def test_v1_recipe_migrates_and_dry_runs(invoke: Invoke, rel: str, tmp_path: Path) -> None:
    target = tmp_path / "migrated.yaml"
    migrated = invoke("migrate", "-f", str(corpus_root() / "v1" / rel), "-o", str(target))
    assert migrated.exit_code == 0, migrated.output
    assert migrated.stdout.startswith(f"✓ {target}: schema 1 -> 2 (")
    result = invoke("dry-run", "-f", str(target))
    exceptions = yaml.safe_load(MIGRATION_EXCEPTIONS.read_text())
    if rel in exceptions:
        assert result.exit_code == 2, f"{rel} is listed as not loading, but: {result.output}"
        assert "Traceback" not in result.output
        return
    assert result.exit_code == 0, result.stderr
    assert "--- plan on node-" in result.stdout
