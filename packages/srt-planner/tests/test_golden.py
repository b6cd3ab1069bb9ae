"""Golden files for every example, every recipe of ``tests/recipes/`` and every schema-valid
corpus recipe (the corpus ones are the ``corpus`` tier: skipped when the corpus is absent).

For each job a recipe yields (override variants, sweep points) the test renders ``plan.json``,
``sbatch.sh`` and one ``argv/<process>.txt`` per process on a simulated allocation
(``node-01`` ... with addresses ``10.0.0.N``) and compares them with
``tests/golden/<recipe>/<job>/``. A recipe the loader or planner rejects records its message
in ``error.txt`` instead. ``pytest --update-golden`` rewrites the files; otherwise a difference
fails with the unified diff. Corpus root: ``$SRT_CORPUS`` or ``<repo>/../shared/corpus``.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
from pathlib import Path

import msgspec
import pytest
from schema_corpus import ABSENT

from srt_planner import PlannerError, plan_allocation, plan_job, render_sbatch
from srt_planner.plan import JobPlan
from srt_schema.cluster import ClusterConfig
from srt_schema.errors import SchemaError
from srt_schema.load import load_recipe_text

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
GOLDEN = HERE / "golden"
CORPUS = Path(os.environ.get("SRT_CORPUS", str(REPO.parent / "shared" / "corpus")))
CLUSTER = ClusterConfig(default_account="acct", default_partition="batch")
RUNTIME_COMMAND = ("srt-runtime", "run", "--plan", "plan.json")


def _corpus_recipes() -> list[tuple[str, Path]]:
    index = CORPUS / "INDEX.md"
    if not index.is_file():
        return []
    found = []
    for line in index.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 10 or cells[0] != "v2" or cells[-1] != "yes":
            continue
        path = CORPUS / "v2" / cells[1] / cells[2]
        found.append((f"corpus/{cells[1]}/{cells[2]}", path))
    return found


def _example_recipes() -> list[tuple[str, Path]]:
    """The recipes the project owns: ``examples/`` and ``tests/recipes/`` (ordinary tier)."""
    owned = [(f"examples/{p.name}", p) for p in sorted((REPO / "examples").glob("*.yaml"))]
    owned += [(f"recipes/{p.name}", p) for p in sorted((REPO / "tests" / "recipes").glob("*.yaml"))]
    return owned


OWNED = _example_recipes()
CORPUS_RECIPES = _corpus_recipes()
RECIPES = OWNED + CORPUS_RECIPES
CASES = [pytest.param(label, path, id=label) for label, path in OWNED] + (
    [
        pytest.param(label, path, id=label, marks=pytest.mark.corpus)
        for label, path in CORPUS_RECIPES
    ]
    or [pytest.param("corpus", None, id=ABSENT.id, marks=ABSENT.marks)]
)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "__", text)


def render_job_files(text: str, file: str) -> dict[str, str]:
    """Every golden file of one recipe file, keyed by relative path."""
    try:
        jobs = load_recipe_text(text, file=file, cluster=CLUSTER)
    except SchemaError as exc:
        return {"error.txt": f"load: {exc}\n"}
    out: dict[str, str] = {}
    for job in jobs:
        prefix = _slug(job.label.removeprefix(file).lstrip(":") or "job")
        try:
            request = plan_allocation(job.recipe, CLUSTER, runner_name=None)
            nodes = [f"node-{i:02d}" for i in range(1, request.nodes + 1)]
            addresses = {node: f"10.0.0.{i}" for i, node in enumerate(nodes, start=1)}
            plan = plan_job(job.recipe, CLUSTER, nodes, "1234", addresses=addresses)
        except PlannerError as exc:
            out[f"{prefix}/error.txt"] = f"plan: {exc}\n"
            continue
        out[f"{prefix}/plan.json"] = (
            msgspec.json.format(msgspec.json.encode(plan), indent=2).decode() + "\n"
        )
        out[f"{prefix}/sbatch.sh"] = render_sbatch(
            request, output_base="/out", command=RUNTIME_COMMAND
        )
        out.update(_argv_files(prefix, plan))
    return out


def _argv_files(prefix: str, plan: JobPlan) -> dict[str, str]:
    files = {}
    for spec in plan.processes:
        lines = ["# argv", shlex.join(spec.argv), "# srun", shlex.join(spec.srun_argv)]
        files[f"{prefix}/argv/{spec.name}.txt"] = "\n".join(lines) + "\n"
    return files


@pytest.mark.corpus
def test_corpus_is_present() -> None:
    assert _corpus_recipes(), f"no schema-valid corpus recipes under {CORPUS}; set SRT_CORPUS"


@pytest.mark.parametrize(("label", "path"), CASES)
def test_golden(label: str, path: Path, request: pytest.FixtureRequest) -> None:
    rendered = render_job_files(path.read_text(), str(path.name))
    folder = GOLDEN / _slug(label.removesuffix(".yaml"))
    if request.config.getoption("--update-golden"):
        if folder.exists():
            for old in sorted(folder.rglob("*"), reverse=True):
                old.unlink() if old.is_file() else old.rmdir()
        for relative, content in rendered.items():
            target = folder / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
        return
    existing = (
        {str(p.relative_to(folder)): p.read_text() for p in folder.rglob("*") if p.is_file()}
        if folder.exists()
        else {}
    )
    problems: list[str] = []
    for relative in sorted(set(existing) | set(rendered)):
        want, got = existing.get(relative), rendered.get(relative)
        if want == got:
            continue
        if want is None:
            problems.append(f"new file {relative} (run pytest --update-golden)")
            continue
        if got is None:
            problems.append(f"file {relative} is no longer produced")
            continue
        diff = difflib.unified_diff(
            want.splitlines(), got.splitlines(), f"golden/{relative}", "rendered", lineterm=""
        )
        problems.append("\n".join(diff))
    assert not problems, "\n".join(problems)


def _stale(recipes: list[tuple[str, Path]], corpus: bool) -> list[str]:
    expected = {_slug(label.removesuffix(".yaml")) for label, _ in recipes}
    present = {p.name for p in GOLDEN.iterdir() if p.is_dir()} if GOLDEN.exists() else set()
    return sorted(p for p in present - expected if p.startswith("corpus__") == corpus)


def test_no_stale_golden_folders() -> None:
    stale = _stale(OWNED, corpus=False)
    assert not stale, f"golden folders without a recipe (delete them): {stale}"


@pytest.mark.corpus
def test_no_stale_corpus_golden_folders() -> None:
    stale = _stale(CORPUS_RECIPES, corpus=True)
    assert not stale, f"golden folders without a corpus recipe (delete them): {stale}"
