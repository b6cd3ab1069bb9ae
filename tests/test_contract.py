"""Contract: every config file the planner emits decodes in the package that consumes it.

The planner's golden plans (kept current by srt-planner's golden test) are the emitted configs:
each ``bench.json`` must decode and build in srt-bench, each ``tachometer_config.json`` in
srt-telemetry. A consumer that tightens its struct, or a planner that adds a field, fails here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import srt_bench
from srt_telemetry.config import ScrapeConfig, decode_config

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = sorted((ROOT / "packages" / "srt-planner" / "tests" / "golden").glob("*/job/plan.json"))


def _emitted(name: str) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for plan_path in GOLDEN:
        plan = json.loads(plan_path.read_text())
        for item in plan["files"]:
            if item["path"].rsplit("/", 1)[-1] == name:
                found.append((f"{plan_path.parent.parent.name}:{item['path']}", item))
    return found


BENCH = _emitted("bench.json")
SCRAPE = _emitted("tachometer_config.json")


def test_the_planner_emits_configs_to_check() -> None:
    assert len(GOLDEN) >= 30
    assert len(BENCH) >= 25
    assert len(SCRAPE) >= 25


@pytest.mark.parametrize(("source", "item"), BENCH, ids=[s for s, _ in BENCH])
def test_bench_config_decodes_and_plans(source: str, item: dict[str, Any]) -> None:
    config = srt_bench.decode_run_config(item["content"].encode(), source=source)
    srt_bench.build_plan(config, srt_bench.BuildContext(out_dir=Path("/logs")))


@pytest.mark.parametrize(("source", "item"), SCRAPE, ids=[s for s, _ in SCRAPE])
def test_tachometer_config_decodes(source: str, item: dict[str, Any]) -> None:
    config = decode_config(item["content"].encode(), ScrapeConfig, source=source)
    assert config.endpoints


def test_the_post_eval_lm_eval_config_decodes_and_plans() -> None:
    """The built-in post_eval runner's ``eval.json`` (planned only when RUN_EVAL / EVAL_ONLY is
    set, so it is in no golden plan)."""
    from srt_planner import plan_job
    from srt_planner.post_eval import EvalRequest
    from srt_schema import load_recipe_text
    from srt_schema.cluster import ClusterConfig

    text = (ROOT / "examples" / "quickstart.yaml").read_text()
    (job,) = load_recipe_text(text, file="quickstart.yaml", cluster=ClusterConfig())
    local = ClusterConfig(container_runtime="none", launcher="local")
    plan = plan_job(job.recipe, local, "localhost", "1", eval_request=EvalRequest(mode="run_eval"))
    (item,) = [f for f in plan.files if f.path == "eval.json"]
    config = srt_bench.decode_run_config(item.content.encode(), source="eval.json")
    built = srt_bench.build_plan(config, srt_bench.BuildContext(out_dir=Path("/logs")))
    assert built.benchmark_type == "lm-eval"
