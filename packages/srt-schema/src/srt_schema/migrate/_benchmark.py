"""Drop benchmark fields the benchmark type never reads (docs/recipes.md#migration rule 3,
benchmark; docs/recipes.md#benchmark-rules).

The schema-2 loader rejects a field that a type does not use, while v1 ignored it silently, so a
v1 recipe often carries, say, ``isl`` under ``type: gsm8k``. Unregistered types are left alone.
The per-type fields are the validator's table (``srt_schema.registry.BENCHMARK_FIELDS``).
"""

from __future__ import annotations

import msgspec

from srt_schema.migrate._context import Variant, scalar
from srt_schema.migrate._yaml import pop_key, put_key
from srt_schema.recipe import BenchmarkConfig
from srt_schema.registry import BENCHMARK_FIELDS, BENCHMARK_SHARED_FIELDS

__all__ = ["coerce_concurrencies", "prune_benchmark"]

#: every field of the schema's BenchmarkConfig (the generated struct is the schema's own list)
_ALL_FIELDS: frozenset[str] = frozenset(
    field.encode_name for field in msgspec.structs.fields(BenchmarkConfig)
)


def prune_benchmark(v: Variant) -> None:
    bench_type = v.effective("benchmark", "type") or "manual"
    benchmark = v.doc.get("benchmark")
    if not isinstance(bench_type, str):
        return
    accepted = BENCHMARK_FIELDS.get(bench_type)
    if accepted is None:
        if isinstance(benchmark, dict) and "type" in benchmark:
            v.note(f"benchmark.type {bench_type!r} is not a registered type; left as is")
        return
    allowed = accepted | BENCHMARK_SHARED_FIELDS
    if isinstance(benchmark, dict):
        for key in [k for k in benchmark if k in _ALL_FIELDS and k not in allowed]:
            pop_key(benchmark, key)
            v.note(f"removed benchmark.{key} (unused by type {bench_type})")
    # a variant that switches type must also delete what the base set for the old type
    own_type = scalar(v.original("benchmark", "type"))
    base_bench = v.base_v1.get("benchmark")
    if v.is_override and isinstance(own_type, str) and isinstance(base_bench, dict):
        stale = [k for k in base_bench if k in _ALL_FIELDS and k not in allowed]
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
