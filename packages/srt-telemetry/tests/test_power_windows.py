from __future__ import annotations

import json
from pathlib import Path

import pytest

from srt_telemetry.config import ExpectedDevice, ExpectedWindow
from srt_telemetry.power_samples import Sample
from srt_telemetry.power_windows import (
    audit_windows,
    check_coverage,
    decode_window,
    energy_joules,
    read_windows,
    safe_relative,
)

BASE = {
    "schema_version": 1,
    "benchmark_type": "sa-bench",
    "result_path": "sa-bench_isl_1_osl_1/results_concurrency_4_gpus_8.json",
    "concurrency": 4,
    "benchmark_start_time_unix": 100.0,
    "benchmark_end_time_unix": 110.0,
    "duration": 10.0,
    "clock_source": "head_node_unix_clock",
    "status": "completed",
    "reason": None,
}


@pytest.mark.parametrize(
    ("changes", "valid"),
    [
        ({}, True),
        ({"schema_version": True}, False),
        ({"schema_version": 2}, False),
        ({"concurrency": 4.0}, False),
        ({"status": "done"}, False),
        ({"duration": 0}, False),
        ({"reason": "x"}, False),
        ({"status": "failed", "reason": "boom"}, True),
        ({"status": "failed"}, False),
        (
            {
                "status": "running",
                "benchmark_end_time_unix": None,
                "duration": None,
            },
            True,
        ),
        ({"status": "running"}, False),
        (
            {
                "status": "interrupted",
                "benchmark_end_time_unix": None,
                "duration": None,
                "reason": "killed",
            },
            True,
        ),
        (
            {
                "status": "interrupted",
                "benchmark_end_time_unix": None,
                "duration": None,
            },
            False,
        ),
        ({"benchmark_start_time_unix": float("nan")}, False),
    ],
)
def test_window_invariants(changes: dict[str, object], valid: bool) -> None:
    assert (decode_window({**BASE, **changes}) is not None) is valid


@pytest.mark.parametrize(
    ("path", "ok"),
    [
        ("a/b.json", True),
        ("/a.json", False),
        ("a/../b.json", False),
        ("~/a", False),
        ("a//b", False),
        ("", False),
    ],
)
def test_safe_relative(path: str, ok: bool) -> None:
    assert safe_relative(path) is ok


def _write(d: Path, name: str, data: object) -> None:
    (d / name).write_text(json.dumps(data))


def test_read_and_audit(tmp_path: Path) -> None:
    wd = tmp_path / "power" / "windows"
    wd.mkdir(parents=True)
    _write(wd, "results_concurrency_4_gpus_8.json", BASE)
    _write(wd, "copy.json", {**BASE, "result_path": "x/copy.json"})
    _write(
        wd,
        "results_concurrency_8_gpus_8.json",
        {**BASE, "concurrency": 8, "result_path": "r/results_concurrency_8_gpus_8.json"},
    )
    _write(wd, "bad_stem.json", {**BASE, "concurrency": 2, "result_path": "r/other.json"})
    _write(wd, "escape.json", {**BASE, "concurrency": 3, "result_path": "../escape.json"})
    (wd / "garbage.json").write_text("{")
    (wd / "notes.txt").write_text("x")
    (wd / "link.json").symlink_to(wd / "copy.json")
    files = read_windows(wd, tmp_path)
    by_name = {f.name: f.reason for f in files}
    assert by_name == {
        "bad_stem.json": "measurement_window_result_path_invalid",
        "copy.json": None,
        "escape.json": "measurement_window_result_path_invalid",
        "garbage.json": "measurement_window_malformed",
        "link.json": "measurement_window_artifact_path_invalid",
        "notes.txt": "measurement_window_artifact_path_invalid",
        "results_concurrency_4_gpus_8.json": None,
        "results_concurrency_8_gpus_8.json": None,
    }
    audit = audit_windows(
        files,
        [
            ExpectedWindow(benchmark_type="sa-bench", concurrency=4),
            ExpectedWindow(benchmark_type="sa-bench", concurrency=2),
        ],
    )
    assert sorted(audit.artifact_errors) == sorted(
        [
            ("windows/bad_stem.json", ["measurement_window_result_path_invalid"]),
            ("windows/escape.json", ["measurement_window_result_path_invalid"]),
            ("windows/escape.json", ["measurement_window_unexpected"]),
            ("windows/garbage.json", ["measurement_window_malformed"]),
            ("windows/link.json", ["measurement_window_artifact_path_invalid"]),
            ("windows/notes.txt", ["measurement_window_artifact_path_invalid"]),
            ("windows/copy.json", ["measurement_window_duplicate"]),
            ("windows/results_concurrency_4_gpus_8.json", ["measurement_window_duplicate"]),
            ("windows/results_concurrency_8_gpus_8.json", ["measurement_window_unexpected"]),
        ]
    )


def _seq(host: str, gpu: int, points: list[tuple[float, float]], uuid: str = "U") -> list[Sample]:
    return [Sample(t, i, host, gpu, uuid, w) for i, (t, w) in enumerate(points)]


DEV = [ExpectedDevice(hostname="n1", gpu_index=0)]


def test_coverage_bracketing_and_gap() -> None:
    ok = {
        ("n1", 0): _seq(
            "n1", 0, [(99.0, 1), (101.0, 1), (103.5, 1), (106.0, 1), (109.0, 1), (110.5, 1)]
        )
    }
    cov = check_coverage(100.0, 110.0, DEV, ok)
    assert cov.reasons == [] and cov.gaps == {"n1/U": 3.0}
    late = {("n1", 0): _seq("n1", 0, [(100.5, 1), (111.0, 1)])}
    assert check_coverage(100.0, 110.0, DEV, late).reasons == ["measurement_window_not_bracketed"]
    gap = {("n1", 0): _seq("n1", 0, [(100.0, 1), (103.01, 1), (110.0, 1)])}
    cov = check_coverage(100.0, 110.0, DEV, gap)
    assert cov.reasons == ["sample_gap_exceeded"] and cov.gaps == {"n1/U": 6.99}
    swapped = {("n1", 0): [*_seq("n1", 0, [(99.0, 1)]), *_seq("n1", 0, [(111.0, 1)], uuid="V")]}
    assert "gpu_uuid_changed" in check_coverage(100.0, 110.0, DEV, swapped).reasons


def test_energy_trapezoid_with_edge_interpolation() -> None:
    seq = _seq("n1", 0, [(98.0, 100.0), (102.0, 200.0), (112.0, 200.0)])
    # 100..102: from 150 W (interpolated) to 200 W -> 350 J; 102..110: 200 W -> 1600 J
    assert energy_joules(seq, 100.0, 110.0) == pytest.approx(1950.0)
    assert energy_joules(seq, 90.0, 110.0) is None
    assert energy_joules(seq, 110.0, 110.0) is None
