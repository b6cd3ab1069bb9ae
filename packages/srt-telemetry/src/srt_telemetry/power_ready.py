"""`srt-telemetry power wait-ready`: the runtime's readiness gate over `collector.json`."""

from __future__ import annotations

import time
from pathlib import Path

import msgspec

from srt_telemetry.power_manifest import CollectorState

__all__ = ["wait_power_ready"]


def wait_power_ready(power_dir: Path, timeout: float, poll: float = 0.1) -> tuple[bool, str]:
    """(True, detail) once the collector proved readiness; (False, why) on failure/timeout."""
    path = power_dir / "collector.json"
    deadline = time.monotonic() + timeout
    state: CollectorState | None = None
    while True:
        try:
            state = msgspec.json.decode(path.read_bytes(), type=CollectorState)
        except (OSError, msgspec.DecodeError):
            state = None
        if state is not None:
            if state.ready:
                return True, f"power telemetry ready at {state.ready_at_unix}"
            if state.startup_failed or state.status == "stopped":
                return False, (
                    f"{path}: power telemetry did not become ready: {state.reason_codes}; "
                    "check the DCGM exporter logs (telemetry_dcgm_exporter*.out)"
                )
        if time.monotonic() >= deadline:
            what = "no collector state" if state is None else f"reasons {state.reason_codes}"
            return False, (
                f"{path}: power telemetry not ready after {timeout:.1f} s ({what}); "
                "is `srt-telemetry power collect` running?"
            )
        time.sleep(poll)
