"""Contract: the power telemetry configs the planner emits decode in srt-telemetry.

Every golden plan's ``power.json`` must decode as srt-telemetry's ``PowerConfig`` and every
``cpu_power.json`` as ``CpuPowerConfig`` (frozen structs that reject unknown fields), and the
finalize steps must name srt-telemetry subcommands and flags that its command line accepts.
A consumer that tightens its struct, or a planner that adds a field, fails here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from srt_telemetry.cli import build_parser
from srt_telemetry.config import CpuPowerConfig, PowerConfig, decode_config

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = sorted((ROOT / "packages" / "srt-planner" / "tests" / "golden").glob("*/job/plan.json"))


def _plans() -> list[tuple[str, dict[str, Any]]]:
    return [(p.parent.parent.name, json.loads(p.read_text())) for p in GOLDEN]


def _emitted(name: str) -> list[tuple[str, str]]:
    return [
        (label, item["content"])
        for label, plan in _plans()
        for item in plan["files"]
        if item["path"] == name
    ]


POWER = _emitted("power.json")
CPU = _emitted("cpu_power.json")
FINALIZE = [
    (f"{label}:{step['name']}", step)
    for label, plan in _plans()
    for step in plan["finalize"]
    if step["argv"][0] == "srt-telemetry"
]


def test_a_golden_plan_plans_every_power_leg() -> None:
    assert POWER and CPU and FINALIZE


@pytest.mark.parametrize(("source", "content"), POWER, ids=[s for s, _ in POWER])
def test_power_config_decodes(source: str, content: str) -> None:
    config = decode_config(content.encode(), PowerConfig, source=source)
    assert config.endpoints and config.expected_devices and config.expected_windows


@pytest.mark.parametrize(("source", "content"), CPU, ids=[s for s, _ in CPU])
def test_cpu_power_config_decodes(source: str, content: str) -> None:
    config = decode_config(content.encode(), CpuPowerConfig, source=source)
    assert config.expected_nodes


@pytest.mark.parametrize(("source", "step"), FINALIZE, ids=[s for s, _ in FINALIZE])
def test_finalize_steps_are_commands_srt_telemetry_accepts(
    source: str, step: dict[str, Any]
) -> None:
    parser = build_parser()
    exited = [a.replace("{name}", "p") for a in step["exited_args"]]
    extra = [*exited, *step["interrupted_args"], *step["reap_forced_args"]]
    # argparse exits (SystemExit 2) on an unknown subcommand or flag.
    parser.parse_args([*step["argv"][1:], *extra])
