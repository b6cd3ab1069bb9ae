from __future__ import annotations

import pytest
from telemetry_fakes.dcgm import dcgm_body

from srt_telemetry.power_parse import PowerReading, parse_power


def test_corpus_body_gives_four_gpus(dcgm_text: str) -> None:
    out = parse_power(dcgm_text)
    assert out.reasons == []
    assert [(r.gpu_index, r.power_w) for r in out.readings] == [
        (0, 170.582),
        (1, 171.187),
        (2, 165.866),
        (3, 180.378),
    ]
    assert out.readings[0].gpu_uuid == "GPU-c8edd83a-7dc2-4667-5639-a30a879048ae"


@pytest.mark.parametrize(
    ("body", "readings", "reasons"),
    [
        (dcgm_body([("1", "U1", "10"), ("0", "U0", "20")]), [(0, 20.0), (1, 10.0)], []),
        (
            dcgm_body([("0", "U0", "5"), ("0", "U0b", "6"), ("1", "U1", "7")]),
            [(1, 7.0)],
            ["duplicate_power_metric"],
        ),
        (dcgm_body([("0", "U0", "-1")]), [], ["invalid_power_value"]),
        (dcgm_body([("0", "U0", "NaN")]), [], ["invalid_power_value"]),
        (dcgm_body([("0", "U0", "+Inf")]), [], ["invalid_power_value"]),
        (dcgm_body([("x", "U0", "1")]), [], ["gpu_index_missing"]),
        (dcgm_body([("-1", "U0", "1")]), [], ["gpu_index_missing"]),
        (dcgm_body([("0", "", "1")]), [], ["gpu_uuid_missing"]),
        ('DCGM_FI_DEV_GPU_UTIL{gpu="0"} 3\n', [], ["power_metric_missing"]),
        ('DCGM_FI_DEV_POWER_USAGE{gpu="0" 3\n', [], ["endpoint_parse_error"]),
        (
            'DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="U0",GPU_I_ID="1",GPU_I_PROFILE="1g"} 3\n'
            'DCGM_FI_DEV_POWER_USAGE{gpu="1",UUID="U1",GPU_I_ID="",GPU_I_PROFILE=""} 4\n',
            [(1, 4.0)],
            ["mig_instance_unsupported"],
        ),
    ],
)
def test_parser_table(body: str, readings: list[tuple[int, float]], reasons: list[str]) -> None:
    out = parse_power(body)
    assert [(r.gpu_index, r.power_w) for r in out.readings] == readings
    assert out.reasons == reasons


def test_missing_gpu_label_and_uuid_label() -> None:
    out = parse_power('DCGM_FI_DEV_POWER_USAGE{UUID="U"} 1\nDCGM_FI_DEV_POWER_USAGE{gpu="2"} 1\n')
    assert out.reasons == ["gpu_index_missing", "gpu_uuid_missing"]
    assert out.readings == []
    assert PowerReading(0, "u", 1.0) == PowerReading(0, "u", 1.0)
