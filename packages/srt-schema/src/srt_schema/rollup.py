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

Validity (issue #19): `srt-bench validity`, the last finalize step, adds `Validity` (a verdict
`valid` / `invalid` and its `ValidityReason`s, codes from `srt_schema.validity.VALIDITY_REASONS`)
to every run and to the file, and `ClientLoad` (the benchmark client's own event-loop lag and CPU
share during the window) to every run whose result JSON measured it. All omitted when absent, so
an older rollup still decodes; `srtctl compare` / `report` and the dashboard read these names.

Capacity (issue #20): a sa-bench capacity search adds `CapacityResult`
(`srt_schema.rollup_capacity`: the targets, every measured point with its readings and why it was
chosen, why the search stopped, a confidence statement); each point is also an ordinary run.
Omitted otherwise.

Readers are tolerant of unknown fields (unlike config structs): a rollup written by a newer
srt-bench, or by the reference, still shows in `srtctl status`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import msgspec

from srt_schema.rollup_capacity import CapacityResult

__all__ = [
    "ROLLUP_FILE",
    "ClientLoad",
    "PowerSummary",
    "ProfileFile",
    "ProfilesSummary",
    "Rollup",
    "RollupConfig",
    "RollupRun",
    "RunEnergy",
    "Validity",
    "ValidityReason",
    "Verdict",
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


Verdict = Literal["valid", "invalid"]


class ValidityReason(msgspec.Struct, frozen=True, kw_only=True):
    """One reason: `code` from `srt_schema.validity.VALIDITY_REASONS`, `detail` the measured value
    against its bound in one line (`p99 event-loop lag 84.1 ms > 25 ms`)."""

    code: str
    detail: str


class Validity(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The verdict of one window (on a run) or of the whole run (on the file): `invalid` when
    there is at least one reason. `not_checked` names the checks there was no evidence for (code
    and why), so a `valid` verdict never hides a check that could not run."""

    verdict: Verdict
    reasons: tuple[ValidityReason, ...] = ()
    not_checked: tuple[ValidityReason, ...] = ()


class ClientLoad(msgspec.Struct, frozen=True, kw_only=True):
    """The sa-bench client measuring itself during one window: a task that sleeps 10 ms records
    how late it wakes (the event loop's lag, ms), and the process CPU time over the wall time
    (`cpu_share`: 1.0 = one core busy the whole window)."""

    loop_lag_p50_ms: float | None
    loop_lag_p99_ms: float | None
    loop_lag_max_ms: float | None
    lag_samples: int
    cpu_seconds: float
    wall_seconds: float
    cpu_share: float | None


class RollupRun(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One concurrency level. Every field is written, `null` when the client did not report it;
    `energy`, `client_load` and `validity` are omitted when absent."""

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
    #: How the `itl_*` figures were computed: "per-chunk" (gaps between consecutive chunks
    #: carrying text, docs/telemetry-and-bench.md#metric-definitions); omitted when the client
    #: did not say (aiperf, an older sa-bench).
    itl_definition: Literal["per-chunk"] | None = None
    energy: RunEnergy | None = None
    #: Written by `srt-bench validity` (from the window's result JSON).
    client_load: ClientLoad | None = None
    #: This window's verdict (`srt-bench validity`).
    validity: Validity | None = None


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
    #: The whole run's verdict (`srt-bench validity`): its own reasons and every invalid
    #: window's, the detail prefixed with the window's concurrency.
    validity: Validity | None = None
    #: Written by a sa-bench capacity search (`benchmark.capacity`).
    capacity: CapacityResult | None = None

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
