"""`python -m srt_telemetry` = the `srt-telemetry` console script."""

from __future__ import annotations

from srt_telemetry.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
