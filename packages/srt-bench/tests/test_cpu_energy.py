"""CPU energy of a window: the trapezoid, bracketing and the CSV reader (leg A / leg B shapes)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_fakes.power_files import LEG_A_HEADER, leg_a, write_csv

from srt_bench.cpu_energy import integrate_power, read_cpu_totals
from srt_bench.errors import BenchPowerFileError


def test_trapezoid_and_bracketing() -> None:
    pts = [(0.0, 100.0), (2.0, 300.0), (4.0, 100.0)]
    # 1..3: 200 W at 1, 300 W at 2, 200 W at 3 -> (200+300)/2 + (300+200)/2
    assert integrate_power(pts, 1.0, 3.0) == 500.0
    assert integrate_power(pts, 0.0, 4.0) == 800.0
    assert integrate_power(pts, -0.5, 3.0) is None
    assert integrate_power(pts, 1.0, 4.5) is None
    assert integrate_power(pts, 3.0, 3.0) is None
    assert integrate_power([], 0.0, 1.0) is None


def test_cpu_csv_rows_are_taken_once_per_sample_and_blank_totals_skipped(tmp_path: Path) -> None:
    path = tmp_path / "samples.csv"
    write_csv(
        path,
        LEG_A_HEADER,
        [*leg_a("n1", 2.0, 50.0), *leg_a("n1", 1.0, ""), *leg_a("n1", 1.5, 40.0)],
    )
    assert read_cpu_totals(path) == {"n1": [(1.5, 40.0), (2.0, 50.0)]}
    assert read_cpu_totals(tmp_path / "absent.csv") is None


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            [["4", "1.0", "n1", "oops"]],
            "line 2: column total_power_w: 'oops' is not a finite number >= 0",
        ),
        (
            [["4", "nan", "n1", "1"]],
            "line 2: column timestamp_unix: 'nan' is not a finite number >= 0",
        ),
        ([["4", "1.0", "n1"]], "line 2: 3 fields, the header has 4"),
        ([["4", "1.0", "", "1"]], "line 2: column hostname is empty"),
    ],
)
def test_a_malformed_cpu_csv_names_the_file_and_line(
    tmp_path: Path, rows: list[list[str]], message: str
) -> None:
    path = tmp_path / "samples.csv"
    path.write_text(
        "\n".join(["schema_version,timestamp_unix,hostname,total_power_w", *map(",".join, rows)])
        + "\n"
    )
    with pytest.raises(BenchPowerFileError) as exc:
        read_cpu_totals(path)
    assert str(exc.value).startswith(f"{path}: {message}")
