"""srt's own command lines pass the flag check for every catalogued version (issue 30).

Every engine and router argv builder runs for the recipes the project owns (``examples/``,
``tests/recipes/``); each planned process's flags that srt adds itself (not the recipe's
``args``) are checked against every shipped catalog of the program (the other programs pinned to
their newest catalog). A flag srt adds that a catalogued version does not know is listed in
``KNOWN`` with the reason, so a new one fails here and an old one that went away fails too.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import pytest

from srt_cli.flagcheck import load_catalogs
from srt_planner import plan_allocation, plan_job
from srt_planner.errors import PlannerError
from srt_planner.flagcheck import check_plan, version_key
from srt_planner.plan import JobPlan
from srt_schema.cluster import ClusterConfig
from srt_schema.errors import RecipeError, SchemaError
from srt_schema.load import load_recipe_text
from srt_schema.recipe import Recipe

REPO = Path(__file__).resolve().parents[1]
CLUSTER = ClusterConfig(default_account="acct", default_partition="batch")
CORPUS = Path(os.environ.get("SRT_CORPUS", str(REPO.parent / "shared" / "corpus")))
RECIPES = (
    sorted((REPO / "examples").glob("*.yaml"))
    + sorted((REPO / "tests/recipes").glob("*.yaml"))
    # the public recipes too, when the corpus is beside the repository (CI)
    + sorted((CORPUS / "v2").rglob("*.yaml"))
)

#: (program family, first version that takes it, flag srt adds) -> why older catalogued versions
#: refuse it. "" as the version: no catalogued version takes it (a finding, docs/flag-check.md).
KNOWN: dict[tuple[str, str, str], str] = {
    ("dynamo", "1.1.1", "--disaggregation-mode"): "dynamo.vllm 0.8 spelled it --is-prefill-worker",
    ("dynamo", "1.1.1", "--gms-shadow-mode"): "vLLM failover needs dynamo.vllm >= 1.1",
    ("sglang", "0.5.11", "--incremental-streaming-output"): "sidecar mode: SGLang >= 0.5.11",
}
FAMILIES = ("sglang", "vllm", "dynamo", "sglang-router", "smg", "vllm-router")


def _family(tool: str) -> str:
    return "dynamo" if tool.startswith("dynamo-") else tool


def _plans() -> list[tuple[str, Recipe, JobPlan]]:
    out = []
    for path in RECIPES:
        try:
            jobs = load_recipe_text(path.read_text(), file=str(path), cluster=CLUSTER)
        except (SchemaError, RecipeError):
            continue
        for job in jobs[:1]:
            # Dynamo srt installs into the image is the version that runs (the check resolves it
            # from dynamo.source); without the install, container_versions pins every program
            recipe = msgspec.structs.replace(
                job.recipe, dynamo=msgspec.structs.replace(job.recipe.dynamo, install=False)
            )
            try:
                plan = _plan(recipe, CLUSTER)
            except PlannerError:
                continue
            out.append((path.name, recipe, plan))
    return out


def _plan(recipe: Recipe, cluster: ClusterConfig) -> JobPlan:
    request = plan_allocation(recipe, cluster, runner_name=None)
    nodes = tuple(f"node-{i:02d}" for i in range(1, request.nodes + 1))
    return plan_job(recipe, cluster, nodes, "1")


def _pinned(plan: JobPlan, versions: dict[str, str]) -> ClusterConfig:
    images = {p.container.image for p in plan.processes if p.container is not None}
    table = {image: dict(versions) for image in images}
    return msgspec.structs.replace(CLUSTER, container_versions=table)


def _known(family: str, version: str, flag: str) -> tuple[str, str, str] | None:
    for row in KNOWN:
        name, first, known_flag = row
        older = not first or version_key(version) < version_key(first)
        if name == family and known_flag == flag and older:
            return row
    return None


@pytest.mark.parametrize("family", FAMILIES)
def test_srt_flags_pass_every_catalogued_version(family: str) -> None:
    catalogs = load_catalogs()
    newest = {_family(t): max(v, key=version_key) for t, v in catalogs.items()}
    versions = sorted(
        {v for t, table in catalogs.items() if _family(t) == family for v in table},
        key=version_key,
    )
    tools = [t for t in catalogs if _family(t) == family]
    plans = _plans()
    assert plans and versions
    unexpected: list[str] = []
    seen: set[tuple[str, str, str]] = set()
    for version in versions:
        pins = {**newest, family: version}
        for name, recipe, unpinned in plans:
            cluster = _pinned(unpinned, pins)
            # planned for the pinned versions: srt adapts its own flags to them
            plan = _plan(recipe, cluster)
            for finding in check_plan(plan, recipe, cluster, catalogs):
                if finding.severity != "error" or "(added by srt)" not in finding.path:
                    continue
                row = _known(family, version, finding.flag)
                if row is not None:
                    seen.add(row)
                    continue
                if not any(f"{t} {version}" in finding.message for t in tools):
                    continue  # another program's finding, tested under its own family
                unexpected.append(f"{family} {version}: {name}: {finding.message}")
    assert not unexpected, "\n".join(sorted(set(unexpected))[:20])
    if not (CORPUS / "v2").is_dir():
        return  # some rows are only met by public recipes
    stale = [row for row in KNOWN if row[0] == family and row not in seen]
    assert not stale, f"KNOWN rows no catalog needs any more: {stale}"


def test_the_first_vllm_with_device_ids_is_the_catalogs_one() -> None:
    """srt adds --device-ids only from DEVICE_IDS_SINCE on (a pinned older vLLM gets the GPU
    mask); the catalogs say which versions have it."""
    from srt_planner.engines.vllm import DEVICE_IDS_SINCE

    since = version_key(DEVICE_IDS_SINCE)
    has = {v: "--device-ids" in c.flags for v, c in load_catalogs()["vllm"].items()}
    assert has == {v: version_key(v) >= since for v in has}
    assert any(has.values()) and not all(has.values())
