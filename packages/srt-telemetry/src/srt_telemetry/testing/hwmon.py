"""A fake `/sys/class/hwmon` tree with ACPI `power_meter` channels (`... testing fake-hwmon`).

What `cpu_sources.AcpiReader` reads: `<root>/hwmon*/` and each one's `device/`, a `name` file
saying `power_meter`, `power<N>_average` in microwatts (integer text, re-read on every sample)
and `power<N>_oem_info` naming the channel. Per socket `s` three channels, as on Grace:
`Grace Power Socket s` (the socket total, kind `total`), `CPU Power Socket s` (`cpu_rail`, 60 % of
the total) and `SysIO Power Socket s` (`soc`, 20 %). Socket `s` draws `watts + s *
socket_offset_w`.

Layouts: `acpi` (default, the kernel's acpi_power_meter shape): one ACPI000D device per channel
under `<root>/devices/ACPI000D:NN/` with `power1_*`, and `<root>/hwmonK/device` a symlink to it
(no `name` in `hwmonK` itself). `flat`: one `hwmonK` per socket holding `power1..3_*` and `name`
directly, plus a `device` symlink to itself (which the reader must not count twice). Both add
`hwmon0` named `acpitz` (not a power meter).

Writing again with other watts rewrites only the values, so a running collector or exporter
sees the new power on its next read. Each file is replaced atomically, but one file after the
other: a read during the rewrite can see some channels old and some new (as on a real node,
where the channels are not read at one instant either).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["CHANNELS", "FakeHwmon", "HwmonLayout", "socket_total_w", "write_fake_hwmon"]

HwmonLayout = Literal["acpi", "flat"]
# (oem_info prefix, share of the socket total)
CHANNELS: tuple[tuple[str, float], ...] = (
    ("Grace Power Socket", 1.0),
    ("CPU Power Socket", 0.6),
    ("SysIO Power Socket", 0.2),
)


@dataclass(frozen=True, slots=True)
class FakeHwmon:
    root: Path
    sockets: int
    node_total_w: float
    value_files: dict[str, str]  # oem_info -> path of its power*_average file


def socket_total_w(watts: float, socket: int, socket_offset_w: float = 0.0) -> float:
    return watts + socket * socket_offset_w


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(text)
    tmp.replace(path)


def _symlink(link: Path, target: str) -> None:
    if link.is_symlink() and str(link.readlink()) == target:
        return
    if link.is_symlink():
        link.unlink()
    link.symlink_to(target)


def write_fake_hwmon(
    root: Path,
    *,
    sockets: int = 2,
    watts: float = 100.0,
    socket_offset_w: float = 0.0,
    layout: HwmonLayout = "acpi",
) -> FakeHwmon:
    """Create (or update the values of) the tree; returns where each channel's value lives."""
    if sockets < 1:
        raise ValueError(f"sockets={sockets}: need at least one socket")
    if (
        socket_total_w(watts, 0, socket_offset_w) <= 0
        or socket_total_w(watts, sockets - 1, socket_offset_w) <= 0
    ):
        raise ValueError(f"watts={watts}, socket_offset_w={socket_offset_w}: power must be > 0")
    root.mkdir(parents=True, exist_ok=True)
    (root / "hwmon0").mkdir(exist_ok=True)
    _write(root / "hwmon0" / "name", "acpitz\n")
    files: dict[str, str] = {}
    node_total = 0.0
    for s in range(sockets):
        total = socket_total_w(watts, s, socket_offset_w)
        node_total += total
        for c, (prefix, share) in enumerate(CHANNELS):
            label = f"{prefix} {s}"
            micro = f"{round(total * share * 1e6)}\n"
            if layout == "acpi":
                idx = s * len(CHANNELS) + c
                dev = root / "devices" / f"ACPI000D:{idx:02d}"
                dev.mkdir(parents=True, exist_ok=True)
                hw = root / f"hwmon{idx + 1}"
                hw.mkdir(exist_ok=True)
                _symlink(hw / "device", f"../devices/{dev.name}")
                chan = "power1"
            else:
                dev = root / f"hwmon{s + 1}"
                dev.mkdir(exist_ok=True)
                _symlink(dev / "device", ".")
                chan = f"power{c + 1}"
            _write(dev / "name", "power_meter\n")
            _write(dev / f"{chan}_oem_info", f"{label}\n")
            _write(dev / f"{chan}_average", micro)
            files[label] = str(dev / f"{chan}_average")
    return FakeHwmon(root=root, sockets=sockets, node_total_w=node_total, value_files=files)
