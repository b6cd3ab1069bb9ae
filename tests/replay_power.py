"""The `telemetry:` block of a local job whose GPU power comes from the replaying DCGM exporter
(`python -m srt_telemetry.testing replay-dcgm`, the shared GB200 capture at a constant 300 W on
2 GPUs): the job's own dcgm-exporter service runs it in place of the real exporter."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CAPTURE = ROOT / "packages" / "srt-telemetry" / "tests" / "data" / "replay" / "dcgm-gb200-4gpu.txt"
#: What the replaying exporter reports for the whole node (2 GPUs at `const:300`).
NODE_POWER_W = 600.0


def replayed_power(replay_flags: str = "") -> dict[str, Any]:
    command = (
        f"python3 -m srt_telemetry.testing replay-dcgm --capture {CAPTURE} --curve const:300 "
        f"--gpus 2 --hostname node-01 --host 127.0.0.1 --port {{port}} {replay_flags}"
    ).strip()
    return {
        "enabled": True,
        "required": False,
        "collect_interval_ms": 500,
        "startup_timeout_seconds": 20,
        "request_timeout_seconds": 1.5,
        "dcgm_exporter": {
            "container_image": "",
            "binary": "python3",
            "port": 9401,
            "command": command,
        },
    }
