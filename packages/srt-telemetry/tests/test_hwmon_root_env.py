"""``$SRT_HWMON_ROOT`` points the ACPI CPU power reader at another hwmon tree when the config keeps
the default root (how the e2e tier gives a node without sensors a fake tree); an explicit root
wins."""

from __future__ import annotations

from pathlib import Path

import pytest

from srt_telemetry.cpu_sources import DEFAULT_HWMON_ROOT, open_source
from srt_telemetry.testing.hwmon import write_fake_hwmon


def test_the_environment_replaces_the_default_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_fake_hwmon(tmp_path / "fake", sockets=2, watts=100.0)
    monkeypatch.setenv("SRT_HWMON_ROOT", str(tmp_path / "fake"))
    reader = open_source("acpi", DEFAULT_HWMON_ROOT, order=("acpi",))
    assert reader.hwmon_root == tmp_path / "fake"


def test_an_explicit_root_wins_over_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_fake_hwmon(tmp_path / "mine", sockets=1, watts=50.0)
    monkeypatch.setenv("SRT_HWMON_ROOT", str(tmp_path / "missing"))
    reader = open_source("acpi", tmp_path / "mine", order=("acpi",))
    assert reader.hwmon_root == tmp_path / "mine"
