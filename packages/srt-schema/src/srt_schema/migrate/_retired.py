"""Keys schema 2 retired under another name or unit (docs/recipes.md#migration rule 3, retired).

- ``telemetry.default_frequency`` (a period in seconds, despite its name) ->
  ``telemetry.collect_interval_ms`` (x 1000);
- ``observability.tachometer.default_frequency`` (a rate in Hz) ->
  ``observability.tachometer.collect_interval_ms`` (1000 / Hz);
- vLLM's ``set_cuda_visible_devices`` (``backend.`` in v1, ``engine.`` in early schema-2 files) ->
  ``engine.set_visible_devices``;
- ``benchmark.export_node_metrics`` (the reference's node-metrics CSV/Parquet export after the
  benchmark): schema 2 has no such export and srt does not write one, so ``false`` (the default)
  is removed with a note and ``true`` is refused.

A retired key next to its new name with a different value is refused, never picked from. These
keys also make a ``schema: 2`` file worth migrating (``retired_keys``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from srt_schema.migrate._context import Variant
from srt_schema.migrate._yaml import Moved, pop_key, put_key

__all__ = ["fold_retired", "fold_visible_devices", "retired_keys"]

_INTERVALS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("telemetry",), "seconds"),
    (("observability", "tachometer"), "Hz"),
)
_VISIBLE = ("set_cuda_visible_devices", "set_visible_devices")


def retired_keys(section: Mapping[str, Any]) -> list[str]:
    """Dotted retired keys present in one recipe (or override section)."""
    found: list[str] = []
    for path, _ in _INTERVALS:
        block = _block(section, path)
        if isinstance(block, Mapping) and "default_frequency" in block:
            found.append(".".join((*path, "default_frequency")))
    for top in ("backend", "engine"):
        block = section.get(top)
        if isinstance(block, Mapping) and _VISIBLE[0] in block:
            found.append(f"{top}.{_VISIBLE[0]}")
    bench = section.get("benchmark")
    if isinstance(bench, Mapping) and "export_node_metrics" in bench:
        found.append("benchmark.export_node_metrics")
    return found


def _block(section: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = section
    for part in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(part)
    return node


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def _interval_ms(value: Any, unit: str) -> int | None:
    if not _is_number(value):
        return None
    ms = float(value) * 1000 if unit == "seconds" else 1000 / float(value)
    return max(1, round(ms))


def fold_retired(v: Variant) -> None:
    for path, unit in _INTERVALS:
        _fold_interval(v, path, unit)
    _fold_export_node_metrics(v)


def _fold_interval(v: Variant, path: tuple[str, ...], unit: str) -> None:
    block = _block(v.doc, path)
    if not isinstance(block, dict) or "default_frequency" not in block:
        return
    dotted = ".".join(path)
    old = block["default_frequency"]
    values = old if isinstance(old, list) else [old]
    converted = [_interval_ms(value, unit) for value in values]
    meaning = "a period in seconds" if unit == "seconds" else "a rate in Hz"
    if any(ms is None for ms in converted):
        v.refuse(
            f"{dotted}.default_frequency",
            f"{dotted}.default_frequency {old!r} is not a positive number ({meaning}); write "
            f"{dotted}.collect_interval_ms (milliseconds between collections) instead",
        )
        return
    new: Any = converted if isinstance(old, list) else converted[0]
    if "collect_interval_ms" in block:
        if block["collect_interval_ms"] != new:
            v.refuse(
                f"{dotted}.default_frequency",
                f"{dotted}.default_frequency {old!r} ({meaning}, {new!r} ms) contradicts "
                f"{dotted}.collect_interval_ms {block['collect_interval_ms']!r}; delete "
                "default_frequency and keep the interval you mean in collect_interval_ms",
            )
            return
        pop_key(block, "default_frequency")
        v.note(f"dropped {dotted}.default_frequency (collect_interval_ms already says {new})")
        return
    index = list(block.keys()).index("default_frequency")
    moved: Moved = pop_key(block, "default_frequency")
    value = v.literal_list(converted) if isinstance(old, list) else new
    put_key(
        block, "collect_interval_ms", value, index=index, moved=moved, indent=v.column(len(path))
    )
    v.note(f"{dotted}.default_frequency {old!r} ({meaning}) -> collect_interval_ms: {new!r}")


def _fold_export_node_metrics(v: Variant) -> None:
    bench = v.doc.get("benchmark")
    if not isinstance(bench, dict) or "export_node_metrics" not in bench:
        return
    value = bench["export_node_metrics"]
    if value in (False, None):
        pop_key(bench, "export_node_metrics")
        v.note(f"removed benchmark.export_node_metrics: {str(value).lower()} (nothing to export)")
        return
    v.refuse(
        "benchmark.export_node_metrics",
        f"benchmark.export_node_metrics {value!r} asked for the reference's node-metrics "
        "CSV/Parquet export, which schema 2 does not have and srt does not write (srt keeps its "
        "own per-run results and tachometer/ metrics); delete the key",
    )


def fold_visible_devices(v: Variant) -> None:
    """``engine.set_cuda_visible_devices`` -> ``engine.set_visible_devices`` (after fold_engine)."""
    engine = v.doc.get("engine")
    old_name, new_name = _VISIBLE
    if not isinstance(engine, dict) or old_name not in engine:
        return
    old = engine[old_name]
    if new_name in engine:
        if engine[new_name] != old:
            v.refuse(
                f"engine.{old_name}",
                f"engine.{old_name} {old!r} contradicts engine.{new_name} {engine[new_name]!r} "
                f"(the same switch under its schema-2 name); delete {old_name} and keep the "
                f"value you mean in {new_name}",
            )
            return
        pop_key(engine, old_name)
        v.note(f"dropped engine.{old_name} (engine.{new_name} already says {old})")
        return
    index = list(engine.keys()).index(old_name)
    moved = pop_key(engine, old_name)
    put_key(engine, new_name, old, index=index, moved=moved, indent=v.column(1))
    v.note(f"engine.{old_name} -> engine.{new_name}: {str(old).lower()}")
