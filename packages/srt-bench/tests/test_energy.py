"""`srt-bench energy`: energy per concurrency merged into a rollup srt-bench wrote, from power
files in the shapes srt-telemetry writes (built here by hand: this package must not import
srt-telemetry; tests/test_contract.py feeds it srt-telemetry's real encoders' output).

The fixture (`bench_fakes.power_files.write_power`): window 4 is 1000-1010 s with GPU joules
n1/0 1500, n1/1 1600, n2/0 1700.25 (total 4800.25) and CPU samples on both legs; window 16 is
2000-2100 s with one GPU not bracketed (no total) and CPU samples of n2 only.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_fakes.power_files import manifest_doc, window, write_power

from srt_bench.cpu_energy import CPU_NOT_BRACKETED
from srt_bench.energy import NO_VALIDATION, apply_energy
from srt_bench.rollup import build_sa_bench_rollup, write_rollup
from srt_schema.bench_result import BenchResult
from srt_schema.rollup import RunEnergy, decode_rollup


def _result(c: int, **over: object) -> dict[str, object]:
    doc: dict[str, object] = {
        "model_id": "m",
        "max_concurrency": c,
        "output_throughput": 812.4,
        "request_throughput": 0.79,
        "mean_ttft_ms": 410.2,
        "completed": 40,
        "total_input_tokens": 1000 * c,
        "total_output_tokens": 125 * c,
        "total_token_throughput": 7000.0,
    }
    doc.update(over)
    return doc


def _rollup(log: Path, *results: dict[str, object]) -> bytes:
    log.mkdir(parents=True, exist_ok=True)
    docs = [
        msgspec.convert(d, BenchResult) for d in results or (_result(4), _result(8), _result(16))
    ]
    rollup = build_sa_bench_rollup(docs, isl=128, osl=64, timestamp="2026-08-21T12:00:00Z")
    return write_rollup(log, rollup, None).read_bytes()


def _apply(log: Path) -> dict[str, Any]:
    outcome = apply_energy(log, log / "power", log / "cpu_power")
    assert outcome is not None
    doc: dict[str, Any] = json.loads((log / "benchmark-rollup.json").read_bytes())
    return doc


def test_energy_per_run_exact_numbers(tmp_path: Path) -> None:
    before = json.loads(_rollup(tmp_path))
    write_power(tmp_path)
    doc = _apply(tmp_path)
    by_c = {run["concurrency"]: run for run in doc["runs"]}
    e4 = by_c[4]["energy"]
    assert e4["gpu_energy_joules"] == 4800.25
    assert e4["gpu_avg_power_w"] == 4800.25 / 10.0
    assert e4["joules_per_output_token"] == 4800.25 / 500
    assert e4["joules_per_total_token"] == 4800.25 / (4000 + 500)
    assert e4["per_gpu_joules"] == {"n1/0": 1500.0, "n1/1": 1600.0, "n2/0": 1700.25}
    assert list(e4["per_gpu_joules"]) == ["n1/0", "n1/1", "n2/0"]
    assert e4["per_node_joules"] == {"n1": 3100.0, "n2": 1700.25}
    # n1 (leg A): 220 W at 1000 (interpolated), 300 W at 1004, 270 W at 1010 (interpolated)
    # -> 4 * (220 + 300) / 2 + 6 * (300 + 270) / 2 = 1040 + 1710; n2 (leg B, leg A does not
    # bracket): 112.5 W at 1000, 137.5 W at 1010 -> 10 * 250 / 2
    assert e4["per_node_cpu_joules"] == {"n1": 2750.0, "n2": 1250.0}
    assert e4["cpu_energy_joules"] == 4000.0
    assert e4["power_coverage_valid"] is True
    assert e4["reason_codes"] == []
    e16 = by_c[16]["energy"]
    assert e16["gpu_energy_joules"] is None
    assert e16["gpu_avg_power_w"] is None
    assert e16["joules_per_output_token"] is None
    assert e16["joules_per_total_token"] is None
    assert e16["per_node_joules"] == {"n1": 9000.5}
    assert e16["per_node_cpu_joules"] == {"n2": 80.0 * 100}  # n1 has no CPU samples at 2000
    assert e16["cpu_energy_joules"] is None
    assert e16["power_coverage_valid"] is False
    assert e16["reason_codes"] == ["measurement_window_not_bracketed", CPU_NOT_BRACKETED]
    assert "energy" not in by_c[8]  # no window for concurrency 8
    assert doc["power"] == {
        "publication_valid": False,
        "status": "complete",
        "required": True,
        "reason_codes": ["sample_gap_exceeded"],
        "missing": None,
    }
    # everything else is what srt-bench wrote, in its order
    for old, new in zip(before["runs"], doc["runs"], strict=True):
        assert list(new) == [*old, "energy"] if "energy" in new else list(old)
        assert {k: v for k, v in new.items() if k != "energy"} == old
    assert {k: v for k, v in doc.items() if k not in ("runs", "power")} == {
        k: v for k, v in before.items() if k != "runs"
    }
    typed = decode_rollup((tmp_path / "benchmark-rollup.json").read_bytes())
    assert isinstance(typed.runs[0].energy, RunEnergy)
    assert typed.power is not None and typed.power.status == "complete"


def test_running_twice_gives_the_same_bytes(tmp_path: Path) -> None:
    _rollup(tmp_path)
    write_power(tmp_path)
    first = apply_energy(tmp_path, tmp_path / "power", tmp_path / "cpu_power")
    once = (tmp_path / "benchmark-rollup.json").read_bytes()
    second = apply_energy(tmp_path, tmp_path / "power", tmp_path / "cpu_power")
    assert (tmp_path / "benchmark-rollup.json").read_bytes() == once
    assert first is not None and first.changed and first.runs_with_energy == 2
    assert second is not None and not second.changed and second.runs_with_energy == 2
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_rerun_replaces_energy_from_an_earlier_state(tmp_path: Path) -> None:
    _rollup(tmp_path)
    write_power(tmp_path)
    _apply(tmp_path)
    (tmp_path / "power" / "energy.json").unlink()
    doc = _apply(tmp_path)
    assert all("energy" not in run for run in doc["runs"])
    assert doc["power"]["status"] == "complete"
    assert doc["power"]["missing"] == (
        "power/energy.json not found: no energy per window "
        "(power finalization did not write it; status complete)"
    )


def test_no_power_folder_says_so_and_adds_no_energy(tmp_path: Path) -> None:
    written = _rollup(tmp_path)
    (tmp_path / "cpu_power").mkdir()
    (tmp_path / "cpu_power" / "samples.csv").write_text("torn")  # not read: no window needs it
    doc = _apply(tmp_path)
    assert doc["power"] == {
        "publication_valid": False,
        "status": None,
        "required": None,
        "reason_codes": [],
        "missing": "power/manifest.json not found: GPU power was not captured",
    }
    assert doc["runs"] == json.loads(written)["runs"]


def test_windows_match_on_benchmark_type_too(tmp_path: Path) -> None:
    _rollup(tmp_path)
    write_power(tmp_path)
    path = tmp_path / "benchmark-rollup.json"
    doc = json.loads(path.read_bytes())
    doc["benchmark_type"] = "trace-replay"
    path.write_text(json.dumps(doc))
    assert all("energy" not in run for run in _apply(tmp_path)["runs"])


def test_a_window_without_a_validation_row_is_not_covered(tmp_path: Path) -> None:
    _rollup(tmp_path)
    write_power(tmp_path, manifest=manifest_doc(window_validations=[]))
    e4 = _apply(tmp_path)["runs"][0]["energy"]
    assert e4["power_coverage_valid"] is False
    assert e4["reason_codes"] == [NO_VALIDATION]
    assert e4["gpu_energy_joules"] == 4800.25


def test_workload_fields_and_unknown_fields_are_kept(tmp_path: Path) -> None:
    workload = {
        "kind": "multi-turn",
        "prefix_hit_potential": 0.25,
        "prefix_hit_tokens": 1,
        "prefix_prompt_tokens": 4,
        "requests_with_prefix_hit": 1,
        "client_prompt_tokens": 7,
        "server_prompt_tokens": None,
        "prompt_token_mismatches": 0,
    }
    _rollup(tmp_path, _result(4, workload=workload))
    path = tmp_path / "benchmark-rollup.json"
    doc = json.loads(path.read_bytes())
    doc["runs"][0]["from_a_newer_writer"] = {"x": 1}
    doc["extra_top"] = [1]
    path.write_text(json.dumps(doc))
    write_power(tmp_path)
    run = _apply(tmp_path)["runs"][0]
    assert run["workload"] == "multi-turn" and run["prefix_hit_potential"] == 0.25
    assert run["from_a_newer_writer"] == {"x": 1}
    assert run["energy"]["joules_per_total_token"] == 4800.25 / 4500
    assert json.loads(path.read_bytes())["extra_top"] == [1]


def test_a_rollup_without_token_counts_keeps_energy_jsons_per_output_figure(
    tmp_path: Path,
) -> None:
    _rollup(tmp_path, _result(4, total_input_tokens=None, total_output_tokens=None))
    write_power(tmp_path)
    e4 = _apply(tmp_path)["runs"][0]["energy"]
    assert e4["joules_per_output_token"] == 4800.25 / 500  # energy.json's, from the result file
    assert e4["joules_per_total_token"] is None


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "srt_bench", "energy", *args],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_cli_defaults_to_log_power_and_log_cpu_power(tmp_path: Path) -> None:
    _rollup(tmp_path)
    write_power(tmp_path)
    proc = _cli("--log-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {
        "runs_with_energy": 2,
        "publication_valid": False,
        "missing": None,
    }
    doc = json.loads((tmp_path / "benchmark-rollup.json").read_bytes())
    assert doc["runs"][0]["energy"]["cpu_energy_joules"] == 4000.0


def test_cli_with_explicit_folders_and_no_power(tmp_path: Path) -> None:
    log = tmp_path / "logs"
    _rollup(log)
    elsewhere = tmp_path / "gpu"
    proc = _cli(
        "--log-dir", str(log), "--power-dir", str(elsewhere), "--cpu-power-dir", str(tmp_path)
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {
        "runs_with_energy": 0,
        "publication_valid": False,
        "missing": f"{elsewhere / 'manifest.json'} not found: GPU power was not captured",
    }


def test_cli_without_a_rollup_has_nothing_to_do(tmp_path: Path) -> None:
    proc = _cli("--log-dir", str(tmp_path))
    assert proc.returncode == 0
    assert proc.stdout.splitlines() == [
        f"[srt-bench] energy: no {tmp_path / 'benchmark-rollup.json'}: nothing to add energy to"
    ]
    assert not (tmp_path / "benchmark-rollup.json").exists()


@pytest.mark.parametrize(
    ("file", "patch", "where"),
    [
        ("manifest.json", {"publication_valid": "yes"},
         "Expected `bool`, got `str` - at `$.publication_valid`"),
        ("manifest.json", {"window_validations": [{"benchmark_type": "sa-bench"}]},
         "Object missing required field `concurrency` - at `$.window_validations[0]`"),
        ("energy.json", {"windows": [{**window(4, 1.0, 2.0, {}, None), "energy_joules": "x"}]},
         "Expected `float | null`, got `str` - at `$.windows[0].energy_joules`"),
        ("energy.json", {"windows": [window(4, 1.0, 2.0, {}, 1.0), window(4, 1.0, 2.0, {}, 1.0)]},
         "window sa-bench concurrency 4 appears twice - at `$.windows[1]`"),
    ],
)  # fmt: skip
def test_a_malformed_power_file_is_one_line_and_exit_1(
    tmp_path: Path, file: str, patch: dict[str, object], where: str
) -> None:
    written = _rollup(tmp_path)
    write_power(tmp_path)
    path = tmp_path / "power" / file
    doc = json.loads(path.read_text())
    doc.update(patch)
    path.write_text(json.dumps(doc))
    proc = _cli("--log-dir", str(tmp_path))
    assert proc.returncode == 1
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"srt-bench: error: {path}: not a ")
    assert where in line
    assert proc.stdout == ""
    assert (tmp_path / "benchmark-rollup.json").read_bytes() == written


def test_malformed_json_and_a_bad_rollup_are_one_line_too(tmp_path: Path) -> None:
    _rollup(tmp_path)
    write_power(tmp_path)
    (tmp_path / "power" / "energy.json").write_text("{")
    proc = _cli("--log-dir", str(tmp_path))
    assert proc.returncode == 1
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"srt-bench: error: {tmp_path / 'power' / 'energy.json'}: not a ")
    rollup = tmp_path / "benchmark-rollup.json"
    rollup.write_text('{"benchmark_type": "x", "timestamp": "t", "config": {}}')
    proc = _cli("--log-dir", str(tmp_path))
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        f"srt-bench: error: {rollup}: not a benchmark rollup: "
        "Object missing required field `model` - at `$.config`"
    ]


def test_a_malformed_cpu_csv_fails_the_command_naming_it(tmp_path: Path) -> None:
    _rollup(tmp_path)
    write_power(tmp_path)
    bad = tmp_path / "cpu_power" / "samples.csv"
    bad.write_text(bad.read_text() + "4,x\n")
    proc = _cli("--log-dir", str(tmp_path))
    assert proc.returncode == 1
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"srt-bench: error: {bad}: line 14: 2 fields, the header has 17")


def test_a_run_without_energy_has_no_energy_key() -> None:
    rollup = build_sa_bench_rollup(
        [msgspec.convert(_result(4), BenchResult)], isl=1, osl=1, timestamp="t"
    )
    (run,) = msgspec.json.decode(msgspec.json.encode(rollup))["runs"]
    assert "energy" not in run and "power" not in msgspec.to_builtins(rollup)
    assert len(run) == 17 and run["ttft_p99_ms"] is None  # nulls are still written
