"""srt-telemetry: Prometheus scraping to Parquet, DCGM GPU power windows, CPU power collector and
exporter, and the per-run dashboard. Installed alone on compute nodes: imports only msgspec,
httpx and polars (and those lazily, per subcommand)."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
