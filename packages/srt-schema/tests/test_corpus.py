"""The public corpus: every schema-valid v2 recipe loads (all variants and sweep jobs); every
other v2 file is refused at the offending key; every v1 file is refused with the migrate hint."""

from __future__ import annotations

from pathlib import Path

import pytest

from srt_schema import RecipeError, load_recipe_text

pytestmark = pytest.mark.corpus

# v2 files that do not load, and where the first issue points. Why each is refused:
REFUSED: dict[str, str] = {
    # half-migrated: schema 2 with v1 keys
    "NVIDIA/srt-slurm/examples/features/dynamo-source.yaml": "$.backend",
    "NVIDIA/srt-slurm/examples/features/power-noprof.yaml": "$.benchmark.client_placement",
    "NVIDIA/srt-slurm/examples/features/services.yaml": "$.backend",
    "NVIDIA/srt-slurm/examples/mocker/dynamo-agg.yaml": "$.backend",
    "NVIDIA/srt-slurm/examples/sglang/dynamo-agg.yaml": "$.backend",
    "NVIDIA/srt-slurm/examples/sglang/sglang-router-agg.yaml": "$.backend",
    "NVIDIA/srt-slurm/examples/trtllm/dynamo-agg.yaml": "$.backend",
    "NVIDIA/srt-slurm/examples/trtllm/dynamo-disagg.yaml": "$.backend",
    "NVIDIA/srt-slurm/examples/vllm/vllm-direct-agg.yaml": "$.backend",
    "NVIDIA/srt-slurm/examples/vllm/vllm-router-agg.yaml": "$.backend",
    # newer than our schema: keys it does not have
    "NVIDIA/srt-slurm/examples/features/profiling-vllm.yaml": "$.engine.set_cuda_visible_devices",
    "NVIDIA/srt-slurm/examples/vllm/dynamo-agg.yaml": "$.engine.set_cuda_visible_devices",
    "NVIDIA/srt-slurm/examples/features/result-publishers.yaml": "$.reporting.publishers",
    "NVIDIA/srt-slurm/examples/features/status-reporting.yaml": (
        "$.reporting.status.job_id_prefix"
    ),
    "NVIDIA/srt-slurm/examples/features/vllm-failover.yaml": "$.engine.failover.restart",
    "NVIDIA/srt-slurm/examples/trtllm/dynamo-disagg-mooncake.yaml": (
        "$.roles.prefill.mooncake_store_config"
    ),
    "NVIDIA/srt-slurm/examples/trtllm/trtllm-serve-disagg-mooncake.yaml": (
        "$.roles.decode.mooncake_store_config"
    ),
    "NVIDIA/srt-slurm/examples/trtllm/dynamo-mooncake.yaml": "$.services[1].readiness.file",
    "NVIDIA/srt-slurm/examples/trtllm/trtllm-serve-mooncake.yaml": "$.services[1].readiness.file",
    "SemiAnalysisAI/srt-slurm/examples/features/amd-power-telemetry.yaml": (
        "$.telemetry.dcgm_exporter.kind"
    ),
    "SemiAnalysisAI/srt-slurm/examples/tokenspeed/dynamo-agg.yaml": "$.engine",
    "SemiAnalysisAI/srt-slurm/examples/tokenspeed/dynamo-disagg.yaml": "$.engine",
    "SemiAnalysisAI/srt-slurm/examples/tokenspeed/smg-agg.yaml": "$.engine",
    "SemiAnalysisAI/srt-slurm/examples/tokenspeed/smg-disagg.yaml": "$.engine",
    "SemiAnalysisAI/srt-slurm/examples/vllm/llm-d-agg.yaml": "$.frontend.epp_config",
    "SemiAnalysisAI/srt-slurm/examples/vllm/llm-d-disagg.yaml": "$.frontend.epp_config",
    "SemiAnalysisAI/srt-slurm/examples/vllm/llm-d-dp-ranks.yaml": "$.frontend.epp_config",
    # Schema-valid by the JSON Schema, refused by a cross-field rule: these fork files use
    # `frontend.type: sglang` with two workers in its schema-1 meaning (the SGLang router). In
    # schema 2 `sglang` is the direct single-worker server (the schema's own description), so
    # running them as written would be wrong; the message says to write `sglang-router`.
    "SemiAnalysisAI/srt-slurm/examples/features/override.yaml": "$.frontend.type",
    "SemiAnalysisAI/srt-slurm/examples/features/services.yaml": "$.frontend.type",
    "SemiAnalysisAI/srt-slurm/examples/sglang/sglang-router-agg.yaml": "$.frontend.type",
}

# v2 files the JSON Schema alone rejects but our pipeline loads, with the reason.
LOADS_DESPITE_INDEX: dict[str, str] = {
    # `{concurrency}` placeholders sit in integer fields before sweep expansion; every expanded
    # job is valid, which is what loads.
    "NVIDIA/srt-slurm/examples/features/sweep.yaml": "4 sweep jobs",
}


def test_tables_name_real_files(corpus: Path) -> None:
    for rel in [*REFUSED, *LOADS_DESPITE_INDEX]:
        assert (corpus / "v2" / rel).is_file(), rel


def test_v2_recipe(v2_entry: dict[str, str], corpus: Path) -> None:
    rel = v2_entry["rel"]
    text = (corpus / "v2" / rel).read_text()
    if rel in REFUSED:
        try:
            load_recipe_text(text, file=rel)
        except RecipeError as exc:
            assert exc.issues[0].path == REFUSED[rel], str(exc)
            assert all(issue.file.startswith(rel) for issue in exc.issues)
            return
        raise AssertionError(f"{rel} loaded but should be refused at {REFUSED[rel]}")
    assert v2_entry["valid"] == "yes" or rel in LOADS_DESPITE_INDEX, rel
    jobs = load_recipe_text(text, file=rel)
    assert jobs, rel
    names = [job.name for job in jobs]
    assert len(set(names)) == len(names), f"duplicate job names in {rel}: {names}"


def test_sweep_file_expands_every_job(corpus: Path) -> None:
    rel = "NVIDIA/srt-slurm/examples/features/sweep.yaml"
    jobs = load_recipe_text((corpus / "v2" / rel).read_text(), file=rel)
    assert len(jobs) == 4
    assert all(job.sweep_params for job in jobs)


def test_v1_recipe_is_refused_with_the_migrate_hint(v1_entry: dict[str, str], corpus: Path) -> None:
    rel = v1_entry["rel"]
    try:
        load_recipe_text((corpus / "v1" / rel).read_text(), file=rel)
    except RecipeError as exc:
        message = str(exc)
        assert "srtctl migrate" in message, message
        assert "v1" in message, message
        return
    raise AssertionError(f"{rel} (v1 layout) loaded")
