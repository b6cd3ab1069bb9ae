"""The corpus-run tier: every public recipe runs end to end here with stand-in engines.

One test per case of ``benchmarks/corpus_run.py`` (a job of a schema-valid v2 recipe or of a
migrated v1 recipe): ``srtctl apply --local --stand-in-engines`` with the tier's short
benchmark, then the job folder is checked (health gate passed, output tokens at every
concurrency, rollup written, job completed, nothing left running). A case listed in the
exception table of docs/corpus-run.md must fail (a row that no longer fails is stale and fails
this test); every other case must pass. The terminal summary has one line per case with its
wall time.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.corpus, pytest.mark.corpus_run, pytest.mark.slow]


def _runner() -> Any:
    spec = importlib.util.spec_from_file_location("corpus_run", REPO / "benchmarks/corpus_run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["corpus_run"] = module
    spec.loader.exec_module(module)
    return module


RUNNER = _runner()
PRESENT = (RUNNER.CORPUS / "INDEX.md").is_file()
# The documents carry a placeholder tokenizer path: `apply --stand-in-engines` sets its own.
CASES = RUNNER.cases(RUNNER.CORPUS, Path("/nonexistent")) if PRESENT else []
EXCEPTIONS: dict[str, str] = RUNNER.exceptions()


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One output base for the tier (the stand-in model is written once)."""
    return tmp_path_factory.mktemp("corpus-run")


def _report(config: pytest.Config, line: str) -> None:
    """A line of the terminal summary (the root conftest prints them at the end)."""
    lines: list[str] = config.srt_summary_lines  # type: ignore[attr-defined]
    if not lines:
        lines.append("corpus-run tier (result, wall time, case, note or reason):")
    lines.append("  " + line)


def test_every_exception_row_names_a_case() -> None:
    if not PRESENT:
        pytest.skip("no corpus")
    keys = {case.key for case in CASES}
    stale = sorted(set(EXCEPTIONS) - keys)
    assert not stale, f"docs/corpus-run.md lists cases the tier does not have: {stale}"
    assert all(reason.strip() for reason in EXCEPTIONS.values())


@pytest.mark.parametrize("case", CASES or [None], ids=lambda c: c.key if c else "no-corpus")
def test_recipe_runs_with_stand_in_engines(
    case: Any, base: Path, request: pytest.FixtureRequest
) -> None:
    if case is None:
        pytest.skip("no corpus")
    outcome = RUNNER.run_case(case, base)
    listed = EXCEPTIONS.get(case.key)
    mark = "pass" if outcome.passed else ("fail (listed)" if listed else "FAIL")
    _report(request.config, f"{mark:13} {outcome.seconds:6.1f} s  {case.key}  {outcome.reason}")
    if listed is not None:
        assert not outcome.passed, (
            f"{case.key} passes now: remove its row from docs/corpus-run.md ({listed})"
        )
    else:
        assert outcome.passed, f"{case.key}: {outcome.reason} (job folder: {outcome.job_dir})"
