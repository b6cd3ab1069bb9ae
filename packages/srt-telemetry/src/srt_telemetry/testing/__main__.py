"""`python -m srt_telemetry.testing` (replay-dcgm, fake-hwmon)."""

from __future__ import annotations

from srt_telemetry.testing.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
