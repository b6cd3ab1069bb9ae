"""The fields of `benchmark-rollup.json` the dashboard shows, decoded with msgspec.

The file is defined once, by `srt_schema.rollup.Rollup` (srt-bench writes it). srt-telemetry is
installed alone on compute nodes and imports no workspace package, so it keeps this subset;
`tests/test_contract.py` decodes the real structs' JSON with it, so a renamed or retyped field
fails there. Unknown fields (the rest of the rollup) are ignored, and every field of the energy
subset is optional, so a rollup from an older or newer srt-bench still shows.

Energy (written by `srt-bench energy`): each run's `energy` (`RunEnergyView`) and the file's
`power` verdict (`PowerSummaryView`). They are decoded in a second pass with their own structs,
so `RollupRunView` keeps exactly the real run's field types.

Validity (written by `srt-bench validity`): each run's `validity` and `client_load`
(`ValidityView`, `ClientLoadView`) and the file's `validity`, decoded in the same second pass.
"""

from __future__ import annotations

import msgspec

from srt_telemetry.errors import DashboardError
from srt_telemetry.targets import TargetView, decode_targets

__all__ = [
    "ClientLoadView",
    "PowerSummaryView",
    "RollupRunView",
    "RollupView",
    "RunEnergyView",
    "ValidityReasonView",
    "ValidityView",
    "decode_rollup_view",
]


class RollupRunView(msgspec.Struct, frozen=True, kw_only=True):
    concurrency: int | None = None
    throughput_toks: float | None = None
    request_throughput: float | None = None
    ttft_mean_ms: float | None = None
    ttft_p99_ms: float | None = None
    itl_mean_ms: float | None = None
    itl_p99_ms: float | None = None
    e2el_mean_ms: float | None = None


class RunEnergyView(msgspec.Struct, frozen=True, kw_only=True):
    """A run's `energy` (J, W, J/token); null when srt-bench could not compute it."""

    gpu_energy_joules: float | None = None
    gpu_avg_power_w: float | None = None
    joules_per_output_token: float | None = None
    joules_per_total_token: float | None = None
    cpu_energy_joules: float | None = None
    power_coverage_valid: bool | None = None
    reason_codes: tuple[str, ...] = ()


class PowerSummaryView(msgspec.Struct, frozen=True, kw_only=True):
    """The rollup's `power`: the GPU power manifest's verdict, `missing` = why there is none."""

    publication_valid: bool | None = None
    status: str | None = None
    required: bool | None = None
    reason_codes: tuple[str, ...] = ()
    missing: str | None = None


class ProfileFileView(msgspec.Struct, frozen=True, kw_only=True):
    phase: str = ""
    path: str = ""
    bytes: int = 0


class ProfilesView(msgspec.Struct, frozen=True, kw_only=True):
    """The rollup's `profiles` (srt-bench profiles): the files under `profiles/`, the missing."""

    files: tuple[ProfileFileView, ...] = ()
    missing: tuple[str, ...] = ()


class ValidityReasonView(msgspec.Struct, frozen=True, kw_only=True):
    code: str = ""
    detail: str = ""


class ValidityView(msgspec.Struct, frozen=True, kw_only=True):
    """A window's or the run's verdict (`valid` / `invalid`), its reasons, the unchecked."""

    verdict: str = ""
    reasons: tuple[ValidityReasonView, ...] = ()
    not_checked: tuple[ValidityReasonView, ...] = ()


class ClientLoadView(msgspec.Struct, frozen=True, kw_only=True):
    """The benchmark client's own load during the window (lag in ms, CPU share of a core)."""

    loop_lag_p99_ms: float | None = None
    loop_lag_max_ms: float | None = None
    cpu_share: float | None = None


class RollupView(msgspec.Struct, frozen=True, kw_only=True):
    benchmark_type: str = ""
    runs: tuple[RollupRunView, ...] = ()
    #: concurrency -> the run's energy, for runs that carry one
    energy: dict[int, RunEnergyView] = {}
    power: PowerSummaryView | None = None
    profiles: ProfilesView | None = None
    #: The run's verdict, and concurrency -> each window's verdict and client load.
    validity: ValidityView | None = None
    window_validity: dict[int, ValidityView] = {}
    client_load: dict[int, ClientLoadView] = {}
    #: A capacity search's latency targets (`capacity.targets`; targets.py).
    targets: tuple[TargetView, ...] = ()


class _Doc(msgspec.Struct, frozen=True, kw_only=True):
    benchmark_type: str = ""
    runs: tuple[RollupRunView, ...] = ()


class _EnergyRun(msgspec.Struct, frozen=True, kw_only=True):
    concurrency: int | None = None
    energy: RunEnergyView | None = None
    validity: ValidityView | None = None
    client_load: ClientLoadView | None = None


class _EnergyDoc(msgspec.Struct, frozen=True, kw_only=True):
    runs: tuple[_EnergyRun, ...] = ()
    power: PowerSummaryView | None = None
    profiles: ProfilesView | None = None
    validity: ValidityView | None = None


def decode_rollup_view(data: bytes, *, source: str) -> RollupView:
    """Decode; `DashboardError` names the file and the bad `$.path`. Runs sorted by concurrency."""
    try:
        doc = msgspec.json.decode(data, type=_Doc)
        extra = msgspec.json.decode(data, type=_EnergyDoc)
        targets = decode_targets(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise DashboardError(
            f"{source}: not a benchmark rollup: {exc}; fix or remove the file"
        ) from exc
    runs = tuple(sorted(doc.runs, key=lambda r: r.concurrency or 0))
    energy = {
        r.concurrency: r.energy
        for r in extra.runs
        if r.concurrency is not None and r.energy is not None
    }
    judged = {r.concurrency: r.validity for r in extra.runs if r.concurrency is not None}
    loads = {r.concurrency: r.client_load for r in extra.runs if r.concurrency is not None}
    return RollupView(
        benchmark_type=doc.benchmark_type,
        runs=runs,
        energy=dict(sorted(energy.items())),
        power=extra.power,
        profiles=extra.profiles,
        validity=extra.validity,
        window_validity={c: v for c, v in sorted(judged.items()) if v is not None},
        client_load={c: v for c, v in sorted(loads.items()) if v is not None},
        targets=targets,
    )
