"""A sysfs-shaped hwmon tree with ACPI power_meter channels (Grace layout), for tests."""

from __future__ import annotations

from pathlib import Path

GRACE_CHANNELS = {
    # hwmon dir -> [(channel, oem_info, microwatts)]
    "hwmon3": [
        ("power1", "Grace Power Socket 0", 98_029_000),
        ("power2", "CPU Power Socket 0", 61_250_000),
        ("power3", "SysIO Power Socket 0", 20_125_000),
    ],
    "hwmon4": [
        ("power1", "Grace Power Socket 1", 101_500_000),
        ("power2", "CPU Power Socket 1", 63_000_000),
        ("power3", "SysIO Power Socket 1", 21_750_000),
    ],
}


def make_hwmon(root: Path, channels: dict[str, list[tuple[str, str, int]]] | None = None) -> Path:
    """Write `root/hwmonN/{name,powerK_average,powerK_oem_info}`, plus a non-power hwmon and a
    `device` alias of the first power_meter (which readers must not count twice)."""
    channels = GRACE_CHANNELS if channels is None else channels
    root.mkdir(parents=True, exist_ok=True)
    (root / "hwmon0").mkdir(exist_ok=True)
    (root / "hwmon0" / "name").write_text("acpitz\n")
    first = True
    for hw, chans in channels.items():
        d = root / hw
        d.mkdir(exist_ok=True)
        (d / "name").write_text("power_meter\n")
        for chan, label, micro in chans:
            (d / f"{chan}_average").write_text(f"{micro}\n")
            (d / f"{chan}_oem_info").write_text(f"{label}\n")
        if first:
            (d / "device").symlink_to(d)
            first = False
    return root


def set_power(root: Path, hw: str, chan: str, micro: int) -> None:
    (root / hw / f"{chan}_average").write_text(f"{micro}\n")
