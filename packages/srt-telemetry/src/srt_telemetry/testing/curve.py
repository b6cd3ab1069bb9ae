"""Known power curves for the replaying DCGM exporter, and their analytic energy (pure).

A curve gives each served GPU a power that depends only on the time since the exporter's start:
GPU `i` draws `curve(t) + i * gpu_offset_w` watts at `t = now_unix - start_unix` seconds.

- `const:W` -> `W`
- `linear:BASE:SLOPE` -> `BASE + SLOPE * t` (W, W/s)

Values are served as computed, never clamped: a curve that goes negative is served negative (and
the collector drops those samples as `invalid_power_value`), so `energy_joules` stays the exact
integral of what was served.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from srt_telemetry.errors import ConfigError

__all__ = ["Curve", "CurveError", "curve_energy_joules", "parse_curve"]

CurveKind = Literal["const", "linear"]
_FORMS = "'const:W' or 'linear:BASE:SLOPE' (watts, watts per second)"


class CurveError(ConfigError):
    """A `--curve` value that is not one of the supported forms."""


@dataclass(frozen=True, slots=True)
class Curve:
    kind: CurveKind
    base_w: float
    slope_w_per_s: float = 0.0

    def power_w(self, t: float, gpu_index: int = 0, gpu_offset_w: float = 0.0) -> float:
        """Watts of GPU `gpu_index` at `t` seconds after the start."""
        return self.base_w + self.slope_w_per_s * t + gpu_index * gpu_offset_w

    def render(self) -> str:
        """The `--curve` text that parses back to this curve."""
        match self.kind:
            case "const":
                return f"const:{self.base_w!r}"
            case "linear":
                return f"linear:{self.base_w!r}:{self.slope_w_per_s!r}"


def _number(text: str, what: str, spec: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise CurveError(f"--curve {spec!r}: {what} {text!r} is not a finite number; use {_FORMS}")
    return value


def parse_curve(spec: str) -> Curve:
    """`const:W` or `linear:BASE:SLOPE`; anything else raises `CurveError` naming the forms."""
    kind, _, rest = spec.partition(":")
    parts = rest.split(":") if rest else []
    if kind == "const" and len(parts) == 1:
        return Curve(kind="const", base_w=_number(parts[0], "W", spec))
    if kind == "linear" and len(parts) == 2:
        return Curve(
            kind="linear",
            base_w=_number(parts[0], "BASE", spec),
            slope_w_per_s=_number(parts[1], "SLOPE", spec),
        )
    raise CurveError(f"--curve {spec!r}: not a known curve; use {_FORMS}")


def curve_energy_joules(
    curve: Curve,
    *,
    gpu_indices: Iterable[int],
    gpu_offset_w: float,
    start_unix: float,
    t0_unix: float,
    t1_unix: float,
) -> float:
    """Exact energy (J) the GPUs `gpu_indices` draw over `[t0_unix, t1_unix]` (unix seconds)."""
    if t1_unix < t0_unix:
        raise ValueError(f"window end {t1_unix} is before its start {t0_unix}")
    a, b = t0_unix - start_unix, t1_unix - start_unix
    per_gpu = curve.base_w * (b - a) + curve.slope_w_per_s * (b * b - a * a) / 2
    indices = list(gpu_indices)
    return len(indices) * per_gpu + gpu_offset_w * sum(indices) * (b - a)
