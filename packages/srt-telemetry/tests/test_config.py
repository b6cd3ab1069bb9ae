"""The JSON contract: every example config decodes, round-trips, and is the one the README shows;
unknown fields and wrong types fail with a message naming the file and the JSON path."""

from __future__ import annotations

import json
import re
from pathlib import Path

import msgspec
import pytest
from telemetry_testkit import DATA, HERE

from srt_telemetry.config import (
    Base,
    CpuPowerConfig,
    DashboardConfig,
    ExporterConfig,
    PowerConfig,
    ScrapeConfig,
    decode_config,
    read_config,
)
from srt_telemetry.errors import ConfigError

CONFIGS: dict[str, type[Base]] = {
    "scrape.json": ScrapeConfig,
    "power.json": PowerConfig,
    "cpu_power.json": CpuPowerConfig,
    "exporter.json": ExporterConfig,
    "dashboard.json": DashboardConfig,
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_example_decodes_and_round_trips(name: str) -> None:
    kind = CONFIGS[name]
    path = DATA / "configs" / name
    cfg = read_config(path, kind)
    again = decode_config(msgspec.json.encode(cfg), kind)
    assert again == cfg
    # every field of the struct appears in the example, so the example documents all of them
    assert set(json.loads(path.read_text())) == set(kind.__struct_fields__)


def test_readme_shows_the_examples() -> None:
    readme = (HERE.parent / "README.md").read_text()
    blocks = re.findall(r"<!-- config: (\S+) -->\n```json\n(.*?)```", readme, re.S)
    assert sorted(n for n, _ in blocks) == sorted(CONFIGS)
    for name, body in blocks:
        assert json.loads(body) == json.loads((DATA / "configs" / name).read_text()), name


def test_unknown_field_and_bad_type(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    p.write_text('{"port": 9405, "colour": "red"}')
    with pytest.raises(ConfigError) as exc:
        read_config(p, ExporterConfig)
    assert str(exc.value) == (
        f"{p}: not a valid ExporterConfig: Object contains unknown field `colour`"
    )
    p.write_text('{"output_dir": "/x", "source": "rapl"}')
    with pytest.raises(ConfigError) as exc:
        read_config(p, CpuPowerConfig)
    assert str(exc.value) == (
        f"{p}: not a valid CpuPowerConfig: Invalid enum value 'rapl' - at `$.source`"
    )
    with pytest.raises(ConfigError) as exc:
        read_config(tmp_path / "missing.json", ExporterConfig)
    assert str(exc.value) == (
        f"{tmp_path / 'missing.json'}: cannot read the ExporterConfig file: No such file or "
        "directory; pass the path the planner wrote"
    )


def test_join_timeout_default() -> None:
    cfg = read_config(DATA / "configs" / "power.json", PowerConfig)
    assert cfg.join_timeout == 2 * (2 * 2.0 + 1) + 2 == 12.0
