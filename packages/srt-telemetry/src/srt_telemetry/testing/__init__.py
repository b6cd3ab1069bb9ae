"""Test tools for the power legs, shipped with srt-telemetry so that a test, a benchmark or the
e2e tier can start them as real processes where no GPU exists:

- `python -m srt_telemetry.testing replay-dcgm ...`: an HTTP server serving a real dcgm-exporter
  capture with every GPU's `DCGM_FI_DEV_POWER_USAGE` on a known curve (`dcgm_replay`, `capture`);
- `curve_energy_joules`: the exact energy of that curve over a window, to compare with the
  collector's `energy.json` (`curve`);
- `python -m srt_telemetry.testing fake-hwmon ...`: a `/sys/class/hwmon`-shaped tree with ACPI
  `power_meter` channels for `cpu-power collect|exporter` (`hwmon`).

Importing this package loads only the pure curve helpers (no server, no sockets).
"""

from __future__ import annotations

from srt_telemetry.testing.curve import Curve, CurveError, curve_energy_joules, parse_curve

__all__ = ["Curve", "CurveError", "curve_energy_joules", "parse_curve"]
