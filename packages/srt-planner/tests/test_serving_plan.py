"""Serving plans: ``srtctl apply --serve-only`` and ``benchmark.type: manual`` plan no benchmark
and no eval and say that the job serves; ``benchmark.stream_output`` reaches the plan."""

from __future__ import annotations

import pytest
from planner_testkit import RecipeFactory

from srt_planner import JobPlan, plan_job
from srt_planner.post_eval import EvalRequest
from srt_schema.cluster import ClusterConfig

SA_BENCH = {"type": "sa-bench", "isl": 128, "osl": 64, "concurrencies": [4, 8]}


def _phases(plan: JobPlan) -> set[str]:
    return {spec.phase for spec in plan.processes}


@pytest.mark.parametrize(
    "request_", [EvalRequest(), EvalRequest(mode="run_eval"), EvalRequest(mode="eval_only")]
)
def test_serve_only_plans_no_benchmark(
    make_recipe: RecipeFactory, cluster: ClusterConfig, request_: EvalRequest
) -> None:
    recipe = make_recipe(benchmark=SA_BENCH)
    benchmarked = plan_job(recipe, cluster, "n0", "1", eval_request=request_)
    served = plan_job(recipe, cluster, "n0", "1", serve_only=True, eval_request=request_)

    assert benchmarked.serve_only is False
    assert _phases(benchmarked) & {"benchmark", "post_eval"}
    assert served.serve_only is True
    assert served.eval_only is False
    assert not _phases(served) & {"benchmark", "post_eval"}
    assert served.benchmark_config is None
    assert not {f.path for f in served.files} & {"bench.json", "eval.json"}
    # Everything that serves is planned as for the benchmark run.
    serving = {s.name for s in benchmarked.processes if s.phase not in ("benchmark", "post_eval")}
    assert {s.name for s in served.processes} == serving


def test_manual_recipe_plans_serving(make_recipe: RecipeFactory, cluster: ClusterConfig) -> None:
    manual = plan_job(make_recipe(benchmark={"type": "manual"}), cluster, "n0", "1")
    assert manual.serve_only is True
    assert not _phases(manual) & {"benchmark", "post_eval"}
    assert {"workers", "frontends"} <= _phases(manual)
    # RUN_EVAL runs after a benchmark that exited 0, which a serving job never has: not planned.
    with_eval = plan_job(
        make_recipe(benchmark={"type": "manual"}),
        cluster,
        "n0",
        "1",
        eval_request=EvalRequest(mode="run_eval"),
    )
    assert (with_eval.serve_only, "post_eval" in _phases(with_eval)) == (True, False)
    # EVAL_ONLY: the eval is the job's result, so a manual job runs it and does not serve.
    eval_only = plan_job(
        make_recipe(benchmark={"type": "manual"}),
        cluster,
        "n0",
        "1",
        eval_request=EvalRequest(mode="eval_only"),
    )
    assert (eval_only.serve_only, eval_only.eval_only) == (False, True)
    assert "post_eval" in _phases(eval_only)
    # A benchmark type that runs a client does not serve.
    assert plan_job(make_recipe(benchmark=SA_BENCH), cluster, "n0", "1").serve_only is False


@pytest.mark.parametrize("stream", [True, False])
def test_stream_output_reaches_the_plan(
    make_recipe: RecipeFactory, cluster: ClusterConfig, stream: bool
) -> None:
    recipe = make_recipe(benchmark={**SA_BENCH, "stream_output": stream})
    assert plan_job(recipe, cluster, "n0", "1").stream_benchmark_output is stream
    # Nothing to mirror when no benchmark runs.
    assert plan_job(recipe, cluster, "n0", "1", serve_only=True).stream_benchmark_output is False
