"""Drop benchmark fields the benchmark type never reads (docs/recipes.md#migration rule 3,
benchmark; docs/recipes.md#benchmark-rules).

The schema-2 loader rejects a field that a type does not use, while v1 ignored it silently, so a
v1 recipe often carries, say, ``isl`` under ``type: gsm8k``. Unregistered types are left alone.
"""

from __future__ import annotations

from srt_schema.migrate._context import Variant, scalar
from srt_schema.migrate._yaml import pop_key, put_key

__all__ = [
    "ACCEPTED_FIELDS",
    "BENCHMARK_FIELDS",
    "SHARED_FIELDS",
    "coerce_concurrencies",
    "prune_benchmark",
]

#: every field of the schema's BenchmarkConfig (a test keeps this equal to recipe.schema.json)
BENCHMARK_FIELDS: frozenset[str] = frozenset(
    {
        "type", "stream_output", "isl", "osl", "concurrencies", "req_rate", "placement",
        "colocate_with_frontend", "sweep", "num_examples", "max_tokens", "repeat",
        "num_threads", "max_context_length", "categories", "num_shots", "temperature", "top_p",
        "top_k", "num_requests", "concurrency", "prefix_ratios", "mooncake_workload",
        "ttft_threshold_ms", "itl_threshold_ms", "random_range_ratio", "num_prompts_mult",
        "num_warmup_mult", "dataset_name", "dataset_path", "agentperf_client_dir",
        "agentperf_config", "trace_file", "custom_tokenizer", "use_chat_template",
        "reuse_http_connections", "command", "container_image", "env", "aiperf_package",
        "aiperf_args", "slow_down_sleep_time", "slow_down_wait_time",
    }
)  # fmt: skip

#: fields every type accepts
SHARED_FIELDS: frozenset[str] = frozenset(
    {"type", "placement", "colocate_with_frontend", "stream_output", "aiperf_package",
     "aiperf_args", "concurrencies"}
)  # fmt: skip

_ACCURACY = frozenset({"num_examples", "max_tokens", "repeat", "num_threads"})

#: registered benchmark type -> the fields it reads beyond SHARED_FIELDS
ACCEPTED_FIELDS: dict[str, frozenset[str]] = {
    "manual": frozenset(),
    "lm-eval": frozenset(),
    "sa-bench": frozenset(
        {"isl", "osl", "req_rate", "random_range_ratio", "num_prompts_mult", "num_warmup_mult",
         "dataset_name", "dataset_path", "custom_tokenizer", "use_chat_template",
         "reuse_http_connections", "slow_down_sleep_time", "slow_down_wait_time"}
    ),
    "sglang-bench": frozenset({"isl", "osl", "req_rate"}),
    "gsm8k": _ACCURACY | {"num_shots", "temperature", "top_p", "top_k"},
    "mmlu": _ACCURACY,
    "gpqa": _ACCURACY,
    "longbenchv2": frozenset(
        {"num_examples", "max_tokens", "num_threads", "max_context_length", "categories"}
    ),
    "router": frozenset({"isl", "osl", "num_requests", "concurrency", "prefix_ratios"}),
    "mooncake-router": frozenset({"mooncake_workload", "ttft_threshold_ms", "itl_threshold_ms"}),
    "trace-replay": frozenset({"ttft_threshold_ms", "itl_threshold_ms", "trace_file"}),
    "agentperf": frozenset(
        {"isl", "concurrency", "agentperf_client_dir", "agentperf_config", "container_image",
         "env"}
    ),
    "custom": frozenset({"command", "container_image", "env"}),
}  # fmt: skip


def prune_benchmark(v: Variant) -> None:
    bench_type = v.effective("benchmark", "type") or "manual"
    benchmark = v.doc.get("benchmark")
    if not isinstance(bench_type, str):
        return
    accepted = ACCEPTED_FIELDS.get(bench_type)
    if accepted is None:
        if isinstance(benchmark, dict) and "type" in benchmark:
            v.note(f"benchmark.type {bench_type!r} is not a registered type; left as is")
        return
    allowed = accepted | SHARED_FIELDS
    if isinstance(benchmark, dict):
        for key in [k for k in benchmark if k in BENCHMARK_FIELDS and k not in allowed]:
            pop_key(benchmark, key)
            v.note(f"removed benchmark.{key} (unused by type {bench_type})")
    # a variant that switches type must also delete what the base set for the old type
    own_type = scalar(v.original("benchmark", "type"))
    base_bench = v.base_v1.get("benchmark")
    if v.is_override and isinstance(own_type, str) and isinstance(base_bench, dict):
        stale = [k for k in base_bench if k in BENCHMARK_FIELDS and k not in allowed]
        target = v.child_map(v.doc, "benchmark")
        for key in stale:
            if key not in target:
                put_key(target, key, None)
                v.note(
                    f"benchmark.{key}: null (the base sets it; type {bench_type} does not use it)"
                )


def _numeric_strings(items: list[object]) -> bool:
    return bool(items) and all(isinstance(i, str) and i.strip().isdigit() for i in items)


def coerce_concurrencies(v: Variant) -> None:
    """``concurrencies: ["8", "16"]`` -> ``[8, 16]``: v1 coerced quoted numbers, schema 2 does not.

    In a zip section the outer list is the zip dimension (each variant gets one element, and a
    string element is the ``"4x8"`` form), so only inner lists are converted there.
    """
    benchmark = v.doc.get("benchmark")
    if not isinstance(benchmark, dict) or not isinstance(benchmark.get("concurrencies"), list):
        return
    value = benchmark["concurrencies"]
    lists = [item for item in value if isinstance(item, list)] if v.is_zip else [value]
    changed = False
    for items in lists:
        if _numeric_strings(items):
            for index, item in enumerate(items):
                items[index] = int(item)
            changed = True
    if changed:
        v.note("benchmark.concurrencies: quoted numbers -> integers (v1 converted them)")
