"""One served model name per plan: what every worker is told to serve is what every client asks
for (bench.json, post_eval's MODEL_NAME, the health gate, ``plan.served_model_name``).

The corpus test plans every public schema-2 recipe (and every v1 recipe that migrates) and checks
the worker argv against bench.json, the way the Dynamo frontend would answer a request: a name
mismatch there is a 404 "Model not found" on the benchmark's first request.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

import pytest
from planner_testkit import RecipeFactory

from srt_planner import PlannerError, plan_allocation, plan_job
from srt_planner.benchmark import BENCH_CONFIG
from srt_planner.plan import JobPlan
from srt_planner.post_eval import EvalRequest
from srt_schema.cluster import ClusterConfig
from srt_schema.errors import SchemaError
from srt_schema.load import load_recipe_text
from srt_schema.migrate import migrate_text

CLUSTER = ClusterConfig(default_account="acct", default_partition="batch")
REPO = Path(__file__).resolve().parents[3]
CORPUS = Path(os.environ.get("SRT_CORPUS", str(REPO.parent / "shared" / "corpus")))
#: The flag each engine is told its served name with (the mocker's is ``--model-name``).
NAME_FLAGS = ("--served-model-name", "--served_model_name", "--model-name")


def _words(argv: tuple[str, ...]) -> list[str]:
    """The argv, or the words of a ``bash -c`` script (a sidecar's coupled launch)."""
    if argv[:2] != ("bash", "-c"):
        return list(argv)
    return [word for line in argv[2].splitlines() for word in shlex.split(line, comments=True)]


def worker_names(plan: JobPlan) -> dict[str, list[str]]:
    """Per worker process: the served name(s) its argv gives (first value of each name flag)."""
    out: dict[str, list[str]] = {}
    for spec in plan.processes:
        if spec.kind != "worker":
            continue
        argv = _words(spec.argv)
        names = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in NAME_FLAGS]
        out[spec.name] = names
    return out


def bench_model(plan: JobPlan) -> str | None:
    for item in plan.files:
        if item.path.endswith(f"/{BENCH_CONFIG}"):
            config: dict[str, Any] = json.loads(item.content)
            return str(config["benchmark"]["model_name"])
    return None


def assert_one_name(plan: JobPlan, expected: str | None = None) -> None:
    """Every worker serves plan.served_model_name, and every client asks for it."""
    name = plan.served_model_name
    if expected is not None:
        assert name == expected
    names = worker_names(plan)
    assert names, "no worker process"
    for worker, given in names.items():
        assert given, f"{worker} is not told which name to serve: {given}"
        assert set(given) == {name}, f"{worker} serves {given}, the plan says {name!r}"
    model = bench_model(plan)
    if model is not None:
        assert model == name, f"bench.json asks for {model!r}, workers serve {name!r}"
    if plan.health.family in ("dynamo", "direct"):
        assert plan.health.model == name
    for spec in plan.processes:
        if spec.phase == "post_eval":
            assert spec.env["MODEL_NAME"] == name


def _plan(recipe: Any, **kwargs: Any) -> JobPlan:
    request = plan_allocation(recipe, CLUSTER, runner_name=None)
    nodes = [f"node-{i:02d}" for i in range(1, request.nodes + 1)]
    return plan_job(recipe, CLUSTER, nodes, "1234", **kwargs)


DISAGG = {
    "prefill": {"nodes": 1, "workers": 1},
    "decode": {"nodes": 1, "workers": 1},
}


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({}, "qwen3"),
        ({"model": {"path": "hf:Qwen/Qwen3-0.6B"}}, "Qwen3-0.6B"),
        (
            {"roles": {"agg": {"nodes": 1, "workers": 1, "args": {"served-model-name": "Org/x"}}}},
            "Org/x",
        ),
        (
            {
                "roles": {
                    "prefill": {"nodes": 1, "workers": 1},
                    "decode": {"nodes": 1, "workers": 1, "args": {"served_model_name": "Org/x"}},
                }
            },
            "Org/x",
        ),
        (
            {
                "engine": "vllm",
                "roles": {
                    "agg": {"nodes": 1, "workers": 1, "args": {"served-model-name": ["a", "b"]}}
                },
            },
            "a",
        ),
        ({"engine": {"type": "trtllm", "served_model_name": "Org/t"}, "roles": DISAGG}, "Org/t"),
        (
            {
                "engine": {"type": "trtllm", "served_model_name": "Org/t"},
                "frontend": {"type": "trtllm_serve"},
            },
            "Org/t",
        ),
        ({"engine": "trtllm", "frontend": {"type": "trtllm_serve"}}, "qwen3"),
        (
            {
                "engine": "mocker",
                "roles": {"agg": {"nodes": 1, "workers": 2, "args": {"model-name": "Org/tiny"}}},
            },
            "Org/tiny",
        ),
        (
            {
                "engine": "vllm",
                "frontend": {"type": "vllm"},
                "roles": {"agg": {"nodes": 1, "workers": 1, "args": {"served-model-name": "v"}}},
            },
            "v",
        ),
        (
            {
                "frontend": {"type": "sglang-router"},
                "roles": {"agg": {"nodes": 1, "workers": 2, "args": {"served-model-name": "r"}}},
            },
            "r",
        ),
    ],
    ids=[
        "default-basename",
        "hf-id",
        "sglang-agg-args",
        "sglang-decode-args-names-prefill-too",
        "vllm-list-first",
        "trtllm-engine",
        "trtllm-serve-engine",
        "trtllm-serve-default",
        "mocker-model-name",
        "vllm-direct",
        "sglang-router",
    ],
)
def test_one_served_name_per_plan(
    make_recipe: RecipeFactory, fields: dict[str, Any], expected: str
) -> None:
    plan = _plan(make_recipe(**fields), eval_request=EvalRequest(mode="run_eval"))
    assert_one_name(plan, expected)


def test_vllm_keeps_a_roles_extra_names_after_the_served_one(make_recipe: RecipeFactory) -> None:
    args = {"served-model-name": ["a", "b"]}
    recipe = make_recipe(engine="vllm", roles={"agg": {"nodes": 1, "workers": 1, "args": args}})
    (worker,) = [s for s in _plan(recipe).processes if s.kind == "worker"]
    at = worker.argv.index("--served-model-name")
    assert worker.argv[at + 1 : at + 3] == ("a", "b")
    assert worker.argv.count("--served-model-name") == 1


def test_two_sglang_workers_on_one_node_dump_their_configs_apart(
    make_recipe: RecipeFactory,
) -> None:
    recipe = make_recipe(roles={"agg": {"nodes": 1, "workers": 2, "gpus": 4}})
    dumps = []
    for spec in _plan(recipe).processes:
        if spec.kind == "worker":
            dumps.append(spec.argv[spec.argv.index("--dump-config-to") + 1])
    assert len(dumps) == 2
    assert len(set(dumps)) == 2, dumps


# ---------------------------------------------------------------- the public corpus


def _corpus_texts() -> list[tuple[str, str]]:
    """(label, schema-2 text) of every v2 recipe and every v1 recipe that migrates."""
    out: list[tuple[str, str]] = []
    for path in sorted((CORPUS / "v2").rglob("*.yaml")):
        out.append((f"v2/{path.relative_to(CORPUS / 'v2')}", path.read_text()))
    for path in sorted((CORPUS / "v1").rglob("*.yaml")):
        try:
            text = migrate_text(path.read_text(), file=path.name).text
        except SchemaError:
            continue
        out.append((f"v1/{path.relative_to(CORPUS / 'v1')}", text))
    return out


@pytest.mark.corpus
def test_corpus_recipes_serve_the_name_the_benchmark_asks_for() -> None:
    if not (CORPUS / "v2").is_dir():
        pytest.skip(f"recipe corpus not found at {CORPUS}; set SRT_CORPUS")
    planned = 0
    named = 0
    problems: list[str] = []
    for label, text in _corpus_texts():
        try:
            jobs = load_recipe_text(text, file=label, cluster=CLUSTER)
        except SchemaError:
            continue  # refused recipes are the loader's tests' business
        for job in jobs:
            try:
                plan = _plan(job.recipe)
            except PlannerError:
                continue
            if not worker_names(plan):
                continue  # pools-only jobs (training, RL) serve no model
            planned += 1
            if all(worker_names(plan).values()):
                named += 1
            try:
                assert_one_name(plan)
            except AssertionError as exc:
                problems.append(f"{job.label}: {exc}")
    assert not problems, "\n".join(problems)
    # The corpus holds hundreds of planable jobs; a loader that refused them all would pass above.
    assert planned >= 100 and named == planned, (planned, named)
