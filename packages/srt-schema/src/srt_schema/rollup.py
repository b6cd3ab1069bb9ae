"""`benchmark-rollup.json`: the one definition of the file srt-bench writes and srt-cli
(`srtctl status`) and srt-runtime read (docs/telemetry-and-bench.md#rollup).

It lives here, not in srt-bench, because every reader may import srt-schema while the runtime and
the CLI's status path must not depend on the benchmark client. srt-telemetry (installed alone)
keeps a small decoder of the fields its dashboard shows; `tests/test_contract.py` checks it
against these structs' JSON. Field names and units are the reference's, so tools that read
srt-slurm results keep working; the `*_median_ms` and `total_token_throughput` fields are ours.

Readers are tolerant of unknown fields (unlike config structs): a rollup written by a newer
srt-bench, or by the reference, still shows in `srtctl status`.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["ROLLUP_FILE", "Rollup", "RollupConfig", "RollupRun", "decode_rollup", "encode_rollup"]

ROLLUP_FILE = "benchmark-rollup.json"


class RollupRun(msgspec.Struct, frozen=True, kw_only=True):
    """One concurrency level. Every field is written, `null` when the client did not report it."""

    concurrency: int | None
    throughput_toks: float | None
    request_throughput: float | None
    ttft_mean_ms: float | None
    ttft_p99_ms: float | None
    tpot_mean_ms: float | None
    tpot_p99_ms: float | None
    itl_mean_ms: float | None
    itl_p99_ms: float | None
    e2el_mean_ms: float | None
    completed_requests: int | float | None
    total_input_tokens: int | float | None
    total_output_tokens: int | float | None
    total_token_throughput: float | None
    ttft_median_ms: float | None
    tpot_median_ms: float | None
    itl_median_ms: float | None


class RollupConfig(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What was benchmarked. `workload` only for the embedded aiperf rollups (agentperf)."""

    model: str | None
    isl: int | None
    osl: int | None
    workload: str | None = None


class Rollup(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The whole file: `runs` per concurrency, or (embedded aiperf exports) the raw `data`."""

    benchmark_type: str
    timestamp: str
    config: RollupConfig
    runs: tuple[RollupRun, ...] = ()
    #: Deliberately free-form: aiperf's own export document, embedded as it is.
    data: dict[str, Any] | None = None

    def sorted_runs(self) -> tuple[RollupRun, ...]:
        return tuple(sorted(self.runs, key=lambda r: r.concurrency or 0))


def encode_rollup(rollup: Rollup) -> bytes:
    """The file's bytes: indented JSON and a final newline (pure)."""
    return msgspec.json.format(msgspec.json.encode(rollup), indent=2) + b"\n"


def decode_rollup(data: bytes) -> Rollup:
    """Decode a rollup; raises `msgspec.ValidationError` / `msgspec.DecodeError` naming the
    `$.path` of a bad field (callers add the file name)."""
    return msgspec.json.decode(data, type=Rollup)
