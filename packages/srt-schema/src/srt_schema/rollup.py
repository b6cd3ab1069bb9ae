"""`benchmark-rollup.json`: the one definition of the file srt-bench writes and srt-cli
(`srtctl status`) and srt-runtime read (docs/telemetry-and-bench.md#rollup).

It lives here, not in srt-bench, because every reader may import srt-schema while the runtime and
the CLI's status path must not depend on the benchmark client. srt-telemetry (installed alone)
keeps a small decoder of the fields its dashboard shows; `tests/test_contract.py` checks it
against these structs' JSON. Field names and units are the reference's, so tools that read
srt-slurm results keep working; the `*_median_ms` and `total_token_throughput` fields are ours.

Profiles: `srt-bench profiles`, a finalize step after the profiled workers stopped, adds
`ProfilesSummary` (the files under `profiles/<phase>/` and what is missing). Omitted when the
recipe does not profile.

Energy (issue #17): `srt-bench energy`, run after power finalization, adds `RunEnergy` to each
run whose concurrency has a measurement window in `<power_dir>/energy.json` (GPU joules per
device, per node and per token; CPU joules per node from the CPU power CSVs) and `PowerSummary`
(the GPU power manifest's verdict) to the file. Both are omitted when absent, so a rollup without
power telemetry keeps the reference's shape. Units: joules (J), watts (W), joules per token.

Readers are tolerant of unknown fields (unlike config structs): a rollup written by a newer
srt-bench, or by the reference, still shows in `srtctl status`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

__all__ = [
    "ROLLUP_FILE",
    "PowerSummary",
    "ProfileFile",
    "ProfilesSummary",
    "Rollup",
    "RollupConfig",
    "RollupRun",
    "RunEnergy",
    "decode_rollup",
    "encode_rollup",
]

ROLLUP_FILE = "benchmark-rollup.json"


class RunEnergy(msgspec.Struct, frozen=True, kw_only=True):
    """Energy of one run's measurement window. Every number is `null` when it cannot be computed
    (a GPU or node whose samples do not bracket the window, no token count)."""

    #: Sum over every expected GPU (J); null unless every GPU's samples bracket the window.
    gpu_energy_joules: float | None
    #: `gpu_energy_joules` / window duration (W).
    gpu_avg_power_w: float | None
    #: GPU J / the run's output tokens, and / its input + output tokens.
    joules_per_output_token: float | None
    joules_per_total_token: float | None
    #: GPU J per device, keyed `"<hostname>/<gpu_index>"` (devices whose samples bracket the
    #: window), and those summed per hostname.
    per_gpu_joules: dict[str, float]
    per_node_joules: dict[str, float]
    #: CPU node totals integrated over the window (J); null when no CPU samples bracket it
    #: (`cpu_energy_joules` also when any node seen in the CPU samples does not).
    cpu_energy_joules: float | None
    per_node_cpu_joules: dict[str, float] | None
    #: The GPU power manifest's verdict for this window, and its reasons (plus ours for CPU).
    power_coverage_valid: bool
    reason_codes: tuple[str, ...]


class PowerSummary(msgspec.Struct, frozen=True, kw_only=True):
    """The GPU power manifest's verdict (`<power_dir>/manifest.json`): quote energy only when
    `publication_valid`. `missing` says in one line why there is no power at all (else null)."""

    publication_valid: bool
    status: str | None
    required: bool | None
    reason_codes: tuple[str, ...]
    missing: str | None


class ProfileFile(msgspec.Struct, frozen=True, kw_only=True):
    """One profile the job wrote (`srt-bench profiles`, a finalize step after the workers
    stopped): its phase folder under `profiles/`, its path relative to the log folder, its size."""

    phase: str
    path: str
    bytes: int


class ProfilesSummary(msgspec.Struct, frozen=True, kw_only=True):
    """What profiling produced: the files, and each expected profile that is missing with why."""

    files: tuple[ProfileFile, ...] = ()
    missing: tuple[str, ...] = ()


class RollupRun(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One concurrency level. Every field is written, `null` when the client did not report it;
    only `energy` is omitted when absent (no power telemetry for this run)."""

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
    energy: RunEnergy | None = None


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
    #: Written by `srt-bench energy` after power finalization.
    power: PowerSummary | None = None
    #: Written by `srt-bench profiles` when the recipe profiles.
    profiles: ProfilesSummary | None = None

    def sorted_runs(self) -> tuple[RollupRun, ...]:
        return tuple(sorted(self.runs, key=lambda r: r.concurrency or 0))


def encode_rollup(rollup: Rollup | Mapping[str, Any]) -> bytes:
    """The file's bytes: indented JSON and a final newline (pure). A mapping (a decoded file with
    fields these structs do not know, which a rewrite must keep) is written the same way."""
    return msgspec.json.format(msgspec.json.encode(rollup), indent=2) + b"\n"


def decode_rollup(data: bytes) -> Rollup:
    """Decode a rollup; raises `msgspec.ValidationError` / `msgspec.DecodeError` naming the
    `$.path` of a bad field (callers add the file name)."""
    return msgspec.json.decode(data, type=Rollup)
