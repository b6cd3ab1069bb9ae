from __future__ import annotations

import math
from pathlib import Path

import msgspec
import pytest

from srt_bench.config import (
    decode_run_config,
    parse_concurrencies,
    parse_request_rate,
    read_run_config,
)
from srt_bench.errors import BenchConfigError


def _doc(**over: object) -> bytes:
    doc: dict[str, object] = {
        "benchmark": {"type": "sa-bench", "isl": 8, "osl": 4, "concurrencies": "2x4"},
        "endpoint": "http://127.0.0.1:8000",
        "model_name": "m",
        "total_gpus": 8,
    }
    doc.update(over)
    return msgspec.json.encode(doc)


def test_decodes_a_minimal_config_with_defaults() -> None:
    c = decode_run_config(_doc())
    assert c.benchmark.type == "sa-bench"
    assert c.benchmark.req_rate == "inf"
    assert c.benchmark.use_chat_template is True
    assert c.percentiles == (50.0, 90.0, 99.0)
    assert c.api == "auto"


def test_unknown_fields_are_rejected_with_their_path() -> None:
    with pytest.raises(BenchConfigError) as err:
        decode_run_config(_doc(benchmark={"type": "sa-bench", "islx": 1}), source="b.json")
    assert str(err.value) == "b.json: Object contains unknown field `islx` - at `$.benchmark`"
    with pytest.raises(BenchConfigError, match=r"b\.json: Object contains unknown field `extra`"):
        decode_run_config(_doc(extra=1), source="b.json")


def test_bad_values_name_the_field() -> None:
    with pytest.raises(BenchConfigError) as err:
        decode_run_config(_doc(total_gpus=-1), source="b.json")
    assert str(err.value) == "b.json: $.total_gpus: must be >= 0, got -1"
    with pytest.raises(BenchConfigError, match="not valid JSON"):
        decode_run_config(b"{", source="b.json")


def test_read_run_config_missing_file(tmp_path: Path) -> None:
    with pytest.raises(BenchConfigError, match=r"cannot read the run config .*nope\.json"):
        read_run_config(tmp_path / "nope.json")


def test_concurrencies_list_or_x_string() -> None:
    assert parse_concurrencies("4x8x16") == (4, 8, 16)
    assert parse_concurrencies((8, 4, 8)) == (8, 4, 8)
    assert parse_concurrencies(None) == ()
    with pytest.raises(BenchConfigError) as err:
        parse_concurrencies("4,8")
    assert "'4,8' is not an x-separated list of integers" in str(err.value)
    with pytest.raises(BenchConfigError, match="0 is not a positive integer"):
        parse_concurrencies((4, 0))


def test_request_rate() -> None:
    assert math.isinf(parse_request_rate("inf"))
    assert math.isinf(parse_request_rate(None))
    assert parse_request_rate(5) == 5.0
    assert parse_request_rate("2.5") == 2.5
    with pytest.raises(BenchConfigError, match="'fast' is neither a number nor 'inf'"):
        parse_request_rate("fast")
    with pytest.raises(BenchConfigError, match="must be positive"):
        parse_request_rate(0)


def test_the_stand_in_tokenizer_replaces_a_model_folder_this_node_lacks(tmp_path: Path) -> None:
    here = tmp_path / "model"
    here.mkdir()
    stand_in = str(tmp_path / ".stand-in-model")
    for given, used in ((str(tmp_path / "absent"), stand_in), (str(here), str(here))):
        path = tmp_path / "bench.json"
        path.write_bytes(_doc(tokenizer_path=given, stand_in_tokenizer=stand_in))
        assert read_run_config(path).tokenizer_path == used
    # without a stand-in fallback the given path is kept, present or not
    path.write_bytes(_doc(tokenizer_path=str(tmp_path / "absent")))
    assert read_run_config(path).tokenizer_path == str(tmp_path / "absent")
