from __future__ import annotations

from pathlib import Path

import pytest

from srt_telemetry.power_samples import HEADER, Sample, SamplesWriter, read_samples


def test_writer_header_and_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "samples.csv"
    w = SamplesWriter(path)
    rows = [Sample(1780000000.123456789, 0, "n1", 0, "GPU-a", 170.58200000000002)]
    w.write(rows)
    w.close()
    text = path.read_text()
    assert text.splitlines()[0] == (
        "schema_version,timestamp_unix,scrape_seq,hostname,gpu_index,gpu_uuid,power_w"
    )
    assert text.splitlines()[1] == "1,1780000000.1234567,0,n1,0,GPU-a,170.58200000000002"
    got = read_samples(path)
    assert got.reasons == [] and got.samples == rows
    assert HEADER[0] == "schema_version"


def _csv(tmp_path: Path, body: str, header: str = ",".join(HEADER)) -> Path:
    p = tmp_path / "samples.csv"
    p.write_text(header + "\n" + body)
    return p


@pytest.mark.parametrize(
    ("body", "reasons", "kept"),
    [
        ("1,1.0,0,n1,0,U,5\n1,2.0,1,n1,0,U,6\n", [], 2),
        ("1,1.0,0,n1,0,U,5\n1,1.5,0,n1,0,U,6\n", ["duplicate_sample_row"], 1),
        ("1,2.0,0,n1,0,U,5\n1,1.0,1,n1,0,U,6\n", ["timestamp_non_monotonic"], 2),
        ("2,1.0,0,n1,0,U,5\n", ["samples_csv_malformed"], 0),
        ("1,1.0,0,n1,0,U\n", ["samples_csv_malformed"], 0),
        ("1,1.0,0,,0,U,5\n", ["samples_csv_malformed"], 0),
        ("1,1.0,0,n1,0,,5\n", ["samples_csv_malformed"], 0),
        ("1,1.0,0,n1,0,U,-5\n", ["samples_csv_malformed"], 0),
        ("1,1.0,0,n1,0,U,nan\n", ["samples_csv_malformed"], 0),
        ("1,inf,0,n1,0,U,5\n", ["samples_csv_malformed"], 0),
        ("1,1.0,-1,n1,0,U,5\n", ["samples_csv_malformed"], 0),
        ("1,1.0,0,n1,-2,U,5\n", ["samples_csv_malformed"], 0),
        ("1,1.0,x,n1,0,U,5\n", ["samples_csv_malformed"], 0),
    ],
)
def test_strict_reader(tmp_path: Path, body: str, reasons: list[str], kept: int) -> None:
    got = read_samples(_csv(tmp_path, body))
    assert got.reasons == reasons
    assert len(got.samples) == kept


def test_header_mismatch_and_missing(tmp_path: Path) -> None:
    assert read_samples(tmp_path / "nope.csv").reasons == ["samples_csv_missing"]
    p = _csv(tmp_path, "1,1.0,0,n1,0,U,5\n", header="schema_version,timestamp_unix")
    assert read_samples(p).reasons == ["samples_csv_header_mismatch"]
