"""CPU power sources: ACPI `power_meter` hwmon channels (Grace-class servers) and DCGM CPU fields.

`AcpiReader` scans `<hwmon_root>/hwmon*` (and each one's `device/` alias, de-duplicated by the
resolved path) for `name == power_meter`, reads `power*_average` (else `power*_input`) in µW and
classifies each channel by its `power*_oem_info` / `power*_label` text into `total`, `cpu_rail`,
`soc`, `dram` or `other`. It is usable only with at least one `total` channel.

DCGM: `find_dcgm_bindings` looks for the DCGM Python bindings (importable, or under the two
standard install paths). Reading CPU fields through them is not implemented in this build (no
hardware to verify it against), so `open_source` reports DCGM as unavailable with that reason.
"""

from __future__ import annotations

import importlib.util
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from srt_telemetry.errors import SourceUnavailableError

__all__ = [
    "AcpiReader",
    "ChannelReading",
    "Kind",
    "classify",
    "find_dcgm_bindings",
    "open_source",
]

Kind = Literal["total", "cpu_rail", "soc", "dram", "other"]
DCGM_BINDING_DIRS = (
    "/usr/share/datacenter-gpu-manager-4/bindings/python3",
    "/usr/local/dcgm/bindings/python3",
)
_SOCKET = re.compile(r"socket\s*(\d+)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ChannelReading:
    sensor: str  # "<hwmonN>/<channel>"
    kind: Kind
    socket: str
    label: str
    watts: float


def classify(label: str) -> Kind:
    """Kind of a power_meter channel from its OEM label."""
    low = label.lower()
    if low.startswith(("grace power socket", "total power", "total input power")):
        return "total"
    if low.startswith(("cpu rail", "cpu power socket")):
        return "cpu_rail"
    if low.startswith(("soc rail", "sysio power socket")):
        return "soc"
    if "dram" in low or low.startswith("memory"):
        return "dram"
    return "other"


def _socket(label: str) -> str:
    m = _SOCKET.search(label)
    return m.group(1) if m else "0"


@dataclass(frozen=True, slots=True)
class _Channel:
    sensor: str
    value_file: Path
    kind: Kind
    socket: str
    label: str


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


class AcpiReader:
    """Reads the ACPI power_meter channels found at construction."""

    source = "acpi"

    def __init__(self, hwmon_root: Path) -> None:
        self.hwmon_root = hwmon_root
        self.channels = self._discover()

    def _discover(self) -> list[_Channel]:
        seen: set[Path] = set()
        channels: list[_Channel] = []
        if not self.hwmon_root.is_dir():
            return channels
        for hw in sorted(self.hwmon_root.glob("hwmon*")):
            for d in (hw, hw / "device"):
                if _read_text(d / "name") != "power_meter":
                    continue
                real = d.resolve()
                if real in seen:
                    continue
                seen.add(real)
                for avg in sorted(d.glob("power*_average")) or sorted(d.glob("power*_input")):
                    chan = avg.name.split("_")[0]
                    label = (
                        _read_text(d / f"{chan}_oem_info") or _read_text(d / f"{chan}_label") or ""
                    )
                    channels.append(
                        _Channel(f"{hw.name}/{chan}", avg, classify(label), _socket(label), label)
                    )
        return channels

    @property
    def usable(self) -> bool:
        return any(c.kind == "total" for c in self.channels)

    def read(self) -> list[ChannelReading]:
        """Current readings in W; zero or unreadable channels are left out."""
        out: list[ChannelReading] = []
        for c in self.channels:
            text = _read_text(c.value_file)
            try:
                micro = float(text) if text is not None else 0.0
            except ValueError:
                continue
            if micro > 0:
                out.append(ChannelReading(c.sensor, c.kind, c.socket, c.label, micro / 1e6))
        return out


def find_dcgm_bindings() -> str | None:
    """Where the DCGM Python bindings are (module path or install dir), or None."""
    if importlib.util.find_spec("pydcgm") is not None:
        return "pydcgm"
    for d in DCGM_BINDING_DIRS:
        if (Path(d) / "pydcgm.py").is_file():
            return d
    return None


def _dcgm_unavailable() -> str:
    where = find_dcgm_bindings()
    if where is None:
        return (
            "DCGM Python bindings not found (import pydcgm, "
            + ", ".join(DCGM_BINDING_DIRS)
            + "); install datacenter-gpu-manager-4 or use source 'acpi'"
        )
    return (
        f"DCGM bindings found at {where}, but reading DCGM CPU power fields (1130) is not "
        "implemented in this srt-telemetry build; use source 'acpi'"
    )


#: Points the ACPI reader at another hwmon tree (tests, unusual hosts) when the config keeps the
#: default root; an explicit non-default root in the config or on the command line wins.
HWMON_ROOT_ENV = "SRT_HWMON_ROOT"
DEFAULT_HWMON_ROOT = Path("/sys/class/hwmon")


def effective_hwmon_root(configured: Path) -> Path:
    override = os.environ.get(HWMON_ROOT_ENV)
    if override and configured == DEFAULT_HWMON_ROOT:
        return Path(override)
    return configured


def open_source(
    source: Literal["auto", "acpi", "dcgm"], hwmon_root: Path, *, order: tuple[str, ...]
) -> AcpiReader:
    """The first usable reader. `auto` tries `order`; an explicit source is mandatory.
    ``$SRT_HWMON_ROOT`` replaces the default root (:func:`effective_hwmon_root`)."""
    hwmon_root = effective_hwmon_root(hwmon_root)
    tried: list[str] = []
    for name in order if source == "auto" else (source,):
        if name == "acpi":
            reader = AcpiReader(hwmon_root)
            if reader.usable:
                return reader
            tried.append(f"acpi: no power_meter hwmon channel of kind 'total' under {hwmon_root}")
        else:
            tried.append(f"dcgm: {_dcgm_unavailable()}")
    raise SourceUnavailableError(f"no usable CPU power source ({source}): " + "; ".join(tried))
