"""The fields of `benchmark-rollup.json` the dashboard shows, decoded with msgspec.

The file is defined once, by `srt_schema.rollup.Rollup` (srt-bench writes it). srt-telemetry is
installed alone on compute nodes and imports no workspace package, so it keeps this subset;
`tests/test_contract.py` decodes the real structs' JSON with it, so a renamed or retyped field
fails there. Unknown fields (the rest of the rollup) are ignored.
"""

from __future__ import annotations

import msgspec

from srt_telemetry.errors import DashboardError

__all__ = ["RollupRunView", "RollupView", "decode_rollup_view"]


class RollupRunView(msgspec.Struct, frozen=True, kw_only=True):
    concurrency: int | None = None
    throughput_toks: float | None = None
    request_throughput: float | None = None
    ttft_mean_ms: float | None = None
    ttft_p99_ms: float | None = None
    itl_mean_ms: float | None = None
    itl_p99_ms: float | None = None
    e2el_mean_ms: float | None = None


class RollupView(msgspec.Struct, frozen=True, kw_only=True):
    benchmark_type: str = ""
    runs: tuple[RollupRunView, ...] = ()


def decode_rollup_view(data: bytes, *, source: str) -> RollupView:
    """Decode; `DashboardError` names the file and the bad `$.path`. Runs sorted by concurrency."""
    try:
        view = msgspec.json.decode(data, type=RollupView)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise DashboardError(
            f"{source}: not a benchmark rollup: {exc}; fix or remove the file"
        ) from exc
    runs = tuple(sorted(view.runs, key=lambda r: r.concurrency or 0))
    return RollupView(benchmark_type=view.benchmark_type, runs=runs)
