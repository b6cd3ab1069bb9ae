"""The post_eval process: mode from the environment, argv placeholders, env, placement
(docs/telemetry-and-bench.md#post-eval)."""

from __future__ import annotations

import json

import msgspec
import pytest
from planner_testkit import RecipeFactory

from srt_planner import JobPlan, plan_job
from srt_planner.plan import ProcessSpec
from srt_planner.post_eval import EvalRequest, build_eval_request
from srt_schema.cluster import ClusterConfig

RUN_EVAL = EvalRequest(mode="run_eval")
EVAL_ONLY = EvalRequest(mode="eval_only")


def _eval(plan: JobPlan) -> ProcessSpec:
    (spec,) = [s for s in plan.processes if s.phase == "post_eval"]
    return spec


@pytest.mark.parametrize(
    ("environ", "request_"),
    [
        ({}, EvalRequest()),
        ({"RUN_EVAL": "true"}, RUN_EVAL),
        ({"RUN_EVAL": "TRUE", "EVAL_ONLY": "false"}, RUN_EVAL),
        ({"RUN_EVAL": "true", "EVAL_ONLY": "1"}, EVAL_ONLY),
        ({"RUN_EVAL": "no", "EVAL_CONC": "32"}, EvalRequest(eval_conc="32")),
        ({"EVAL_CONC": ""}, EvalRequest()),
    ],
)
def test_the_request_from_the_environment(environ: dict[str, str], request_: EvalRequest) -> None:
    assert build_eval_request(environ) == request_


def test_no_eval_process_unless_the_environment_asks(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    plan = plan_job(make_recipe(benchmark={"type": "sa-bench"}), cluster, "n0", "1")
    assert not [s for s in plan.processes if s.phase == "post_eval"]
    assert plan.eval_only is False


def test_run_eval_with_a_command_fills_the_placeholders_in_every_element(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(
        benchmark={"type": "sa-bench", "isl": 128, "osl": 64, "concurrencies": "4x64x16"},
        post_eval={
            "command": ["python3", "-m", "ev", "--url={endpoint}/v1", "{infmax_workspace}", "{x}"],
            "passthrough_env": ["HF_TOKEN"],
        },
        environment={"LM_EVAL_TASKS": "gsm8k"},
    )
    plan = plan_job(
        recipe, cluster, "n[0-1]", "9", addresses={"n0": "10.0.0.1"}, eval_request=RUN_EVAL
    )
    spec = _eval(plan)
    assert spec.argv == (
        "python3",
        "-m",
        "ev",
        "--url=http://10.0.0.1:8000/v1",
        "/infmax-workspace",
        "{x}",
    )
    assert (spec.name, spec.kind, spec.role, spec.nodes) == (
        "post_eval",
        "benchmark",
        "eval",
        ("n0",),
    )
    assert (spec.oneshot, spec.critical, spec.log_file) == (True, False, "eval.out")
    # Passthrough variables are inherited from the job's environment, never copied into the plan.
    assert spec.env == {"LM_EVAL_TASKS": "gsm8k", "MODEL_NAME": "qwen3", "EVAL_CONC": "64"}
    assert spec.container is not None and spec.container.image == "dynamo-sglang.sqsh"
    assert "--output" in spec.srun_argv and "./outputs/9/logs/eval.out" in spec.srun_argv
    assert plan.eval_only is False
    assert [s.name for s in plan.processes if s.phase == "benchmark"] == ["benchmark"]
    # post_eval is the last phase of the plan.
    assert plan.processes[-1] is spec


def test_eval_conc_from_the_environment_wins(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(
        benchmark={"type": "sa-bench", "isl": 128, "osl": 64, "concurrencies": [4, 8]},
        post_eval={"command": ["true"]},
    )
    request = EvalRequest(mode="run_eval", eval_conc="2")
    assert _eval(plan_job(recipe, cluster, "n0", "1", eval_request=request)).env["EVAL_CONC"] == "2"


def test_eval_only_replaces_the_benchmark_and_is_critical(
    make_recipe: RecipeFactory, cluster: ClusterConfig
) -> None:
    recipe = make_recipe(
        benchmark={"type": "sa-bench", "isl": 128, "osl": 64, "concurrencies": [4]},
        post_eval={"command": ["true"]},
    )
    plan = plan_job(recipe, cluster, "n0", "1", eval_request=EVAL_ONLY)
    assert plan.eval_only is True
    assert not [s for s in plan.processes if s.phase == "benchmark"]
    assert plan.benchmark_config is None
    assert "bench.json" not in {f.path for f in plan.files}
    assert _eval(plan).critical is True


def test_the_default_is_srt_bench_lm_eval(
    make_recipe: RecipeFactory,
) -> None:
    cluster = ClusterConfig(container_runtime="none", launcher="local")
    recipe = make_recipe(engine={"type": "mocker"}, benchmark={"type": "manual"})
    plan = plan_job(
        recipe,
        cluster,
        "localhost",
        "3",
        log_dir="/out/3/logs",
        addresses={"localhost": "127.0.0.1"},
        # EVAL_ONLY: a manual job with RUN_EVAL serves and plans no eval (test_serving_plan.py).
        eval_request=EVAL_ONLY,
    )
    spec = _eval(plan)
    assert spec.argv == ("srt-bench", "run", "--config", "/out/3/logs/eval.json")
    assert "EVAL_CONC" not in spec.env  # no concurrencies: lm-eval's own default applies
    (config_file,) = [f for f in plan.files if f.path == "eval.json"]
    config = json.loads(config_file.content)  # decoded by srt-bench in tests/test_contract.py
    assert config["benchmark"]["type"] == "lm-eval"
    assert (config["endpoint"], config["model_name"]) == ("http://127.0.0.1:8000", "qwen3")
    assert (config["output_dir"], config["tokenizer_path"]) == ("/out/3/logs", "/models/qwen3")
    assert msgspec.json.decode(msgspec.json.encode(plan), type=JobPlan) == plan
