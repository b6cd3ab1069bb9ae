"""Migrate prunes benchmark fields with the validator's table, so a migrated recipe validates."""

from __future__ import annotations

import pytest

from srt_schema.migrate import migrate_text
from srt_schema.registry import BENCHMARK_FIELDS, BENCHMARK_SHARED_FIELDS


def _v1(bench: str) -> str:
    return (
        "name: t\n"
        "model: {path: /m, container: c.sqsh, precision: bf16}\n"
        "resources: {gpu_type: h100, gpus_per_node: 8, agg_nodes: 1, agg_workers: 1}\n"
        f"benchmark: {{{bench}}}\n"
    )


@pytest.mark.parametrize("bench_type", ["gsm8k", "mmlu", "gpqa", "mooncake-router"])
def test_migrate_keeps_a_field_the_type_reads(bench_type: str) -> None:
    """``dataset_path`` is read by the accuracy evals and mooncake-router (the validator's
    table); migrate's former copy of the table removed it."""
    assert "dataset_path" in BENCHMARK_FIELDS[bench_type]
    result = migrate_text(_v1(f"type: {bench_type}, dataset_path: /d.jsonl"), file="t.yaml")
    assert "dataset_path: /d.jsonl" in result.text
    assert not [n for n in result.notes if "dataset_path" in n]


def test_migrate_removes_a_field_the_type_does_not_read() -> None:
    assert "isl" not in BENCHMARK_FIELDS["gsm8k"] | BENCHMARK_SHARED_FIELDS
    result = migrate_text(_v1("type: gsm8k, isl: 128"), file="t.yaml")
    assert "isl" not in result.text
    assert "removed benchmark.isl (unused by type gsm8k)" in result.notes
