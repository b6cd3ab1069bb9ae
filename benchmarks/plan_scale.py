"""Plan and render time of srt-planner for jobs of 10, 100, 1,000 and 4,000 nodes.

Usage: ``uv run --frozen python benchmarks/plan_scale.py [--repeat N]``

Each job is a disaggregated SGLang deployment behind the Dynamo frontend on 4-GPU nodes: half
the nodes run 2-GPU prefill workers, the other half 8-GPU (two-node) decode workers, nginx fans
out to 10 frontends, etcd + NATS + the benchmark client. Prints the best of ``--repeat`` runs of
``plan_allocation`` + ``render_sbatch`` ("render") and of ``plan_job`` + JSON encoding ("plan"),
and the time per node so growth can be read at a glance (target: < 1 s at 1,000 nodes).
"""

from __future__ import annotations

import argparse
import time

import msgspec

from srt_planner import plan_allocation, plan_job, render_sbatch
from srt_schema.cluster import ClusterConfig
from srt_schema.recipe import Recipe

SIZES = (10, 100, 1_000, 4_000)


def _recipe(nodes: int) -> Recipe:
    prefill_nodes = nodes // 2
    decode_nodes = nodes - prefill_nodes
    decode_nodes -= decode_nodes % 2
    prefill_nodes = nodes - decode_nodes
    return msgspec.convert(
        {
            "schema": 2,
            "name": f"scale-{nodes}",
            "model": {"path": "/models/dsr1", "container": "sglang.sqsh", "precision": "fp8"},
            "resources": {"gpu_type": "gb200", "gpus_per_node": 4},
            "engine": "sglang",
            "dynamo": {"request_plane": "nats"},
            "roles": {
                "prefill": {
                    "nodes": prefill_nodes,
                    "workers": prefill_nodes * 2,
                    "gpus": 2,
                    "env": {"NODE_TAG": "{node}-{node_id}"},
                    "args": {"tp-size": 2, "mem-fraction-static": 0.8},
                },
                "decode": {"nodes": decode_nodes, "workers": decode_nodes // 2, "gpus": 8},
            },
            "environment": {"PYTHONUNBUFFERED": "1"},
            "benchmark": {"type": "sa-bench", "isl": 1024, "osl": 1024, "concurrencies": [64]},
        },
        Recipe,
    )


def _best(repeat: int, action: object) -> float:
    assert callable(action)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cluster = ClusterConfig(default_account="acct", default_partition="batch")
    print(f"{'nodes':>6} {'processes':>9} {'render s':>9} {'plan s':>8} {'plan ms/node':>12}")
    for size in SIZES:
        recipe = _recipe(size)
        nodes = [f"node-{i:05d}" for i in range(1, size + 1)]

        def render(recipe: Recipe = recipe) -> None:
            request = plan_allocation(recipe, cluster)
            render_sbatch(request, output_base="/out", command=("srt-runtime", "run"))

        def plan(recipe: Recipe = recipe, nodes: list[str] = nodes) -> None:
            msgspec.json.encode(plan_job(recipe, cluster, nodes, "1"))

        render_s = _best(args.repeat, render)
        plan_s = _best(args.repeat, plan)
        processes = len(plan_job(recipe, cluster, nodes, "1").processes)
        per_node = plan_s / size * 1000
        print(f"{size:>6} {processes:>9} {render_s:>9.4f} {plan_s:>8.3f} {per_node:>12.3f}")


if __name__ == "__main__":
    main()
