"""`srt-bench validity`: a verdict for every benchmark window and for the run, written into
`benchmark-rollup.json` (docs/telemetry-and-bench.md#validity).

The plan's last finalize step (after power finalization, `srt-bench energy` and `srt-bench
profiles`). Every reason code and bound is `srt_schema.validity.VALIDITY_REASONS`'; a check with no
evidence (no result JSON, no status events, no clock comparison) is listed under `not_checked`
instead of passing silently. The run is `invalid` when any window is, or when a run-level check
fails (a planned concurrency missing, power not publishable, the gate saw fewer workers).

`build_*` and `merge_validity` are pure; `apply_validity` reads the inputs
(`srt_bench.validity_inputs`) and rewrites the rollup atomically, keeping every field it does not
own. Running it twice gives the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from srt_bench.errors import BenchValidityFileError
from srt_bench.rollup_file import read_rollup, write_rollup
from srt_bench.validity_inputs import ValidityInputs, read_validity_inputs
from srt_schema.bench_result import BenchResult
from srt_schema.rollup import (
    ROLLUP_FILE,
    ClientLoad,
    PowerSummary,
    Rollup,
    RollupRun,
    Validity,
    ValidityReason,
)
from srt_schema.validity import (
    CLIENT_SATURATED,
    CLOCK_SKEW,
    MAX_CLIENT_CPU_SHARE,
    MAX_FAILURE_RATE,
    MAX_LOOP_LAG_P99_MS,
    MIN_WINDOW_E2E_LATENCIES,
    NO_OUTPUT_TOKENS,
    POWER_INVALID,
    REQUEST_FAILURE_RATE,
    WINDOW_MISSING,
    WINDOW_TOO_SHORT,
    WORKER_RESTARTED,
    WORKERS_NOT_READY,
)

__all__ = [
    "ValidityOutcome",
    "apply_validity",
    "build_client_load",
    "build_client_validity",
    "build_run_validity",
    "build_window_validity",
    "merge_validity",
]


class _Verdicts:
    """Collects one verdict's reasons and unchecked checks, in order, without duplicates."""

    def __init__(self) -> None:
        self.reasons: dict[tuple[str, str], None] = {}
        self.unknown: dict[tuple[str, str], None] = {}

    def bad(self, code: str, detail: str) -> None:
        self.reasons[(code, detail)] = None

    def unchecked(self, code: str, detail: str) -> None:
        self.unknown[(code, detail)] = None

    def build(self) -> Validity:
        return Validity(
            verdict="invalid" if self.reasons else "valid",
            reasons=tuple(ValidityReason(code=c, detail=d) for c, d in self.reasons),
            not_checked=tuple(ValidityReason(code=c, detail=d) for c, d in self.unknown),
        )


def _num(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def build_client_load(result: BenchResult | None) -> ClientLoad | None:
    """The result JSON's `client_load` (None when it has none)."""
    return result.client_load if result is not None else None


def _tokens(v: _Verdicts, run: RollupRun) -> None:
    out = _num(run.total_output_tokens)
    if out is None:
        v.unchecked(NO_OUTPUT_TOKENS, "the rollup has no output token count")
    elif out == 0:
        done = run.completed_requests
        v.bad(NO_OUTPUT_TOKENS, f"0 output tokens from {done} completed request(s)")


def _failures(v: _Verdicts, result: BenchResult | None) -> None:
    if result is None:
        v.unchecked(REQUEST_FAILURE_RATE, "no result JSON for this window")
        return
    failed = _num(result.failed)
    requested = _num(result.requested)
    if failed is None or requested is None:
        v.unchecked(REQUEST_FAILURE_RATE, "the result JSON has no failed/requested counts")
        return
    rate = failed / requested if requested > 0 else 1.0
    if rate > MAX_FAILURE_RATE:
        v.bad(
            REQUEST_FAILURE_RATE,
            f"{failed:.0f}/{requested:.0f} requests failed ({rate:.1%}) > {MAX_FAILURE_RATE:.0%}",
        )


def _client(v: _Verdicts, load: ClientLoad | None) -> None:
    if load is None:
        v.unchecked(CLIENT_SATURATED, "the result JSON has no client_load (not sa-bench's)")
        return
    lag = load.loop_lag_p99_ms
    if lag is not None and lag > MAX_LOOP_LAG_P99_MS:
        v.bad(CLIENT_SATURATED, f"p99 event-loop lag {lag:.1f} ms > {MAX_LOOP_LAG_P99_MS:g} ms")
    share = load.cpu_share
    if share is not None and share > MAX_CLIENT_CPU_SHARE:
        v.bad(
            CLIENT_SATURATED,
            f"client CPU share {share:.0%} of a core > {MAX_CLIENT_CPU_SHARE:.0%}",
        )


def _bounds(result: BenchResult | None) -> tuple[float, float] | None:
    if result is None:
        return None
    start = _num(result.benchmark_start_time_unix)
    end = _num(result.benchmark_end_time_unix)
    return (start, end) if start is not None and end is not None and end >= start else None


def _length(v: _Verdicts, result: BenchResult | None) -> None:
    duration = _num(result.duration) if result is not None else None
    if duration is None:
        v.unchecked(WINDOW_TOO_SHORT, "no window duration (no result JSON)")
        return
    e2el = _num(result.median_e2el_ms) if result is not None else None
    if e2el is None:
        v.unchecked(WINDOW_TOO_SHORT, "no median E2E latency (no completed request)")
    elif duration * 1000.0 < MIN_WINDOW_E2E_LATENCIES * e2el:
        v.bad(
            WINDOW_TOO_SHORT,
            f"window {duration:.2f} s < {MIN_WINDOW_E2E_LATENCIES:g} x the median E2E latency "
            f"({e2el:.0f} ms)",
        )


def _gate(v: _Verdicts, inputs: ValidityInputs) -> None:
    gate = inputs.gate
    if gate is None:
        if inputs.downtimes is None:
            v.unchecked(WORKERS_NOT_READY, "no health_gate.json and no status events")
        return
    for role, seen, planned in (
        ("prefill", gate.seen_prefill, gate.expected_prefill),
        ("decode/agg", gate.seen_decode, gate.expected_decode),
    ):
        if seen is not None and seen < planned:
            v.bad(WORKERS_NOT_READY, f"the health gate saw {seen} of {planned} {role} workers")
    if gate.seen_prefill is None and gate.seen_decode is None and inputs.downtimes is None:
        v.unchecked(
            WORKERS_NOT_READY,
            f"the {gate.family} health gate does not count workers and there are no status events",
        )


def _workers(v: _Verdicts, inputs: ValidityInputs, bounds: tuple[float, float] | None) -> None:
    _gate(v, inputs)
    if bounds is None:
        v.unchecked(WORKER_RESTARTED, "no window bounds (no result JSON)")
        return
    start, end = bounds
    if inputs.downtimes is None:
        v.unchecked(WORKERS_NOT_READY, "no status events: worker exits not checked")
    for d in inputs.downtimes or ():
        if d.down_unix >= end or (d.up_unix is not None and d.up_unix <= start):
            continue
        when = (
            f"{d.down_unix - start:+.1f} s from the window start"
            if d.down_unix >= start
            else f"{start - d.down_unix:.1f} s before the window"
        )
        back = (
            "never came back"
            if d.up_unix is None
            else f"was back {d.up_unix - start:+.1f} s from the window start"
        )
        code = WORKER_RESTARTED if d.restarted else WORKERS_NOT_READY
        v.bad(code, f"{d.worker} exited {when} and {back}")
    for worker, times in inputs.restarts.items():
        inside = [t for t in times if start <= t <= end]
        if inside:
            v.bad(
                WORKER_RESTARTED,
                f"{worker} restarted inside the window ({len(inside)} restart time(s) in "
                "worker_restarts.json)",
            )


def _power(v: _Verdicts, run: RollupRun, inputs: ValidityInputs) -> None:
    if not inputs.power_asked:
        return
    energy = run.energy
    if energy is None:
        v.bad(POWER_INVALID, "power telemetry was asked for and this window has no energy")
    elif not energy.power_coverage_valid:
        codes = ", ".join(energy.reason_codes) or "no reason given"
        v.bad(POWER_INVALID, f"power coverage not valid: {codes}")


def _clock(v: _Verdicts, inputs: ValidityInputs) -> None:
    clock = inputs.clock
    if clock is None:
        if not inputs.single_host:
            why = (
                "no power manifest"
                if inputs.power_asked
                else "no power telemetry: nothing compared the nodes' clocks"
            )
            v.unchecked(CLOCK_SKEW, why)
        return
    tolerance = clock.clock_tolerance_seconds
    bound = f" > {tolerance:g} s" if tolerance is not None else ""
    failed = {f.hostname: f.offset_seconds for f in clock.clock_sync_failures}
    for host, check in sorted(clock.clock_checks.items()):
        if check == "failed" and host not in failed:
            v.bad(CLOCK_SKEW, f"{host}: clock check failed")
    for host, offset in sorted(failed.items()):
        v.bad(CLOCK_SKEW, f"{host} is {offset:+.2f} s off the head node's clock{bound}")
    checked = [c for c in clock.clock_checks.values() if c != "not_checkable"]
    if not checked and not inputs.single_host:
        v.unchecked(CLOCK_SKEW, "no power exporter stamps its samples (dcgm-exporter does not)")


def build_window_validity(
    run: RollupRun, result: BenchResult | None, inputs: ValidityInputs
) -> Validity:
    """One window's verdict (pure)."""
    v = _Verdicts()
    _tokens(v, run)
    _failures(v, result)
    _client(v, build_client_load(result))
    _length(v, result)
    _workers(v, inputs, _bounds(result))
    _power(v, run, inputs)
    _clock(v, inputs)
    return v.build()


def build_client_validity(result: BenchResult) -> Validity:
    """What one sa-bench result says of its own measurement, before any job-level evidence
    (pure): a saturated client or a window too short (the capacity search reads it per point)."""
    v = _Verdicts()
    _client(v, build_client_load(result))
    _length(v, result)
    return v.build()


def _prefixed(c: int | None, reasons: Iterable[ValidityReason]) -> Iterable[tuple[str, str]]:
    return ((r.code, f"c={c}: {r.detail}") for r in reasons)


def build_run_validity(
    rollup: Rollup,
    windows: Mapping[int | None, Validity],
    inputs: ValidityInputs,
    power: PowerSummary | None,
) -> Validity:
    """The run's verdict (pure): its own checks, then every window's reasons (prefixed with the
    concurrency). Unchecked checks are the run's and every window's, once each."""
    v = _Verdicts()
    seen = {r.concurrency for r in rollup.runs}
    if not rollup.runs and rollup.data is not None:
        # agentperf: aiperf's own export, embedded; there are no windows to judge.
        v.unchecked(WINDOW_MISSING, "an embedded aiperf export has no runs per concurrency")
    elif not rollup.runs and not inputs.expected:
        v.bad(WINDOW_MISSING, "the rollup has no run")
    for c in inputs.expected:
        if c not in seen:
            v.bad(WINDOW_MISSING, f"concurrency {c} was planned and has no result")
    if inputs.power_asked:
        if power is None:
            v.bad(POWER_INVALID, "power telemetry was asked for and the rollup has no power")
        elif not power.publication_valid:
            why = ", ".join(power.reason_codes) or power.missing or "no reason given"
            v.bad(POWER_INVALID, f"power.publication_valid is false: {why}")
    _gate(v, inputs)
    _clock(v, inputs)
    for level, window in windows.items():
        for code, detail in _prefixed(level, window.reasons):
            v.bad(code, detail)
        for r in window.not_checked:
            v.unchecked(r.code, r.detail)
    return v.build()


def merge_validity(
    document: Mapping[str, Any], rollup: Rollup, inputs: ValidityInputs
) -> tuple[dict[str, Any], Validity, dict[int | None, Validity]]:
    """The rollup document with `client_load` and `validity` on each run and `validity` on the
    file (pure). Earlier values of these keys are replaced; every other key is kept."""
    runs: list[dict[str, Any]] = []
    windows: dict[int | None, Validity] = {}
    for raw, run in zip(document.get("runs", ()), rollup.runs, strict=True):
        new = {k: val for k, val in raw.items() if k not in ("validity", "client_load")}
        result = inputs.results.get(run.concurrency) if run.concurrency is not None else None
        load = build_client_load(result)
        if load is not None:
            new["client_load"] = msgspec.to_builtins(load)
        verdict = build_window_validity(run, result, inputs)
        windows[run.concurrency] = verdict
        new["validity"] = msgspec.to_builtins(verdict)
        runs.append(new)
    whole = build_run_validity(rollup, windows, inputs, rollup.power)
    out = {k: val for k, val in document.items() if k != "validity"}
    if "runs" in out:
        out["runs"] = runs
    out["validity"] = msgspec.to_builtins(whole)
    return out, whole, windows


@dataclass(frozen=True, slots=True)
class ValidityOutcome:
    path: Path
    run: Validity
    windows: dict[int | None, Validity]
    changed: bool


def apply_validity(
    log_dir: Path,
    *,
    power_dir: Path | None = None,
    expected: tuple[int, ...] = (),
    single_host: bool = False,
    events_file: Path | None = None,
) -> ValidityOutcome | None:
    """Judge `<log_dir>/benchmark-rollup.json` and rewrite it; None when there is no rollup."""
    path = log_dir / ROLLUP_FILE
    read = read_rollup(path, BenchValidityFileError)
    if read is None:
        return None
    data, rollup, document = read
    inputs = read_validity_inputs(
        log_dir,
        power_dir=power_dir,
        expected=expected,
        single_host=single_host,
        events_file=events_file,
    )
    merged, whole, windows = merge_validity(document, rollup, inputs)
    changed = write_rollup(path, merged, data)
    return ValidityOutcome(path=path, run=whole, windows=windows, changed=changed)
