"""`srt_schema.rollup`: the optional `energy` per run and `power` on the file."""

from __future__ import annotations

import json

import msgspec
import pytest

from srt_schema.rollup import (
    PowerSummary,
    Rollup,
    RollupConfig,
    RollupRun,
    RunEnergy,
    decode_rollup,
    encode_rollup,
)

REFERENCE_KEYS = [
    "concurrency", "throughput_toks", "request_throughput", "ttft_mean_ms", "ttft_p99_ms",
    "tpot_mean_ms", "tpot_p99_ms", "itl_mean_ms", "itl_p99_ms", "e2el_mean_ms",
    "completed_requests", "total_input_tokens", "total_output_tokens", "total_token_throughput",
    "ttft_median_ms", "tpot_median_ms", "itl_median_ms",
]  # fmt: skip


def _run(**over: object) -> RollupRun:
    fields: dict[str, object] = dict.fromkeys(REFERENCE_KEYS)
    fields.update(concurrency=4, total_input_tokens=1000, total_output_tokens=500)
    fields.update(over)
    return RollupRun(**fields)  # type: ignore[arg-type]


def _rollup(*runs: RollupRun, power: PowerSummary | None = None) -> Rollup:
    return Rollup(
        benchmark_type="sa-bench",
        timestamp="t",
        config=RollupConfig(model="m", isl=1, osl=2),
        runs=runs,
        power=power,
    )


ENERGY = RunEnergy(
    gpu_energy_joules=4800.25,
    gpu_avg_power_w=480.025,
    joules_per_output_token=9.6005,
    joules_per_total_token=4800.25 / 1500,
    per_gpu_joules={"n1/0": 3100.0, "n2/0": 1700.25},
    per_node_joules={"n1": 3100.0, "n2": 1700.25},
    cpu_energy_joules=None,
    per_node_cpu_joules=None,
    power_coverage_valid=True,
    reason_codes=(),
)
POWER = PowerSummary(
    publication_valid=True, status="complete", required=False, reason_codes=(), missing=None
)


def test_without_energy_the_file_keeps_the_reference_shape() -> None:
    doc = json.loads(encode_rollup(_rollup(_run())))
    assert list(doc) == ["benchmark_type", "timestamp", "config", "runs"]
    assert list(doc["runs"][0]) == REFERENCE_KEYS  # nulls are written, energy is omitted
    assert doc["runs"][0]["ttft_p99_ms"] is None


def test_energy_and_power_round_trip() -> None:
    rollup = _rollup(_run(energy=ENERGY), _run(concurrency=8), power=POWER)
    data = encode_rollup(rollup)
    doc = json.loads(data)
    assert list(doc["runs"][0]) == [*REFERENCE_KEYS, "energy"]
    assert "energy" not in doc["runs"][1]
    assert doc["runs"][0]["energy"]["cpu_energy_joules"] is None  # every energy field written
    assert doc["power"] == {
        "publication_valid": True,
        "status": "complete",
        "required": False,
        "reason_codes": [],
        "missing": None,
    }
    assert decode_rollup(data) == rollup


def test_a_mapping_is_written_like_the_structs() -> None:
    rollup = _rollup(_run(energy=ENERGY), power=POWER)
    assert encode_rollup(msgspec.to_builtins(rollup)) == encode_rollup(rollup)
    assert encode_rollup(rollup).endswith(b"}\n")


def test_readers_ignore_unknown_fields_in_energy_and_power() -> None:
    doc = msgspec.to_builtins(_rollup(_run(energy=ENERGY), power=POWER))
    doc["runs"][0]["energy"]["from_the_future"] = 1
    doc["power"]["also_new"] = [1]
    decoded = decode_rollup(json.dumps(doc).encode())
    assert decoded.runs[0].energy == ENERGY
    assert decoded.power == POWER


def test_a_bad_energy_field_names_its_path() -> None:
    doc = msgspec.to_builtins(_rollup(_run(energy=ENERGY)))
    doc["runs"][0]["energy"]["gpu_energy_joules"] = "a lot"
    with pytest.raises(msgspec.ValidationError) as exc:
        decode_rollup(json.dumps(doc).encode())
    assert str(exc.value) == (
        "Expected `float | null`, got `str` - at `$.runs[0].energy.gpu_energy_joules`"
    )
