"""What `srt-bench validity` judges from (docs/telemetry-and-bench.md#validity), read once.

- the sa-bench result JSONs (`sa-bench_*/results_*.json`, by concurrency): window bounds, failed
  and requested counts, median E2E latency, the client's `client_load`;
- `logs/health_gate.json` (`srt_schema.validity.HealthGateRecord`, the runtime writes it when the
  gate passes): planned and seen worker counts, where the status events are;
- the job's `status_events.jsonl`: worker processes' `exited` / `restarted` / `ready` times
  (a worker is down from its exit until it is ready again);
- `logs/worker_restarts.json`: each restart's exit, relaunch and ready times;
- `<power_dir>/manifest.json` when power telemetry was asked for: the clock check.

srt-bench imports neither srt-runtime nor srt-telemetry, so the few fields read from their files
have decoders here (unknown fields ignored); `tests/test_contract_validity.py` decodes their real
output with them. `build_downtimes` is pure; `read_validity_inputs` does the file I/O.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import msgspec

from srt_bench.errors import BenchDatasetError, BenchValidityFileError
from srt_bench.rollup import read_sa_bench_results
from srt_bench.rollup_file import read_file
from srt_schema.bench_result import BenchResult
from srt_schema.validity import HEALTH_GATE_FILE, HealthGateRecord

__all__ = [
    "EVENTS_FILE",
    "RESTARTS_FILE",
    "ClockView",
    "Downtime",
    "ProcessEventView",
    "RestartEventView",
    "RestartsView",
    "ValidityInputs",
    "build_downtimes",
    "build_restart_times",
    "parse_time",
    "read_validity_inputs",
]

EVENTS_FILE = "status_events.jsonl"
RESTARTS_FILE = "worker_restarts.json"


class ProcessEventView(msgspec.Struct, frozen=True, kw_only=True):
    """A line of `status_events.jsonl` (srt_runtime.status.ProcessEvent when `event` is
    `process`; other lines decode with empty fields and are skipped)."""

    event: str = ""
    what: str = ""
    name: str = ""
    process: str = ""
    kind: str = ""
    at: str = ""


class RestartEventView(msgspec.Struct, frozen=True, kw_only=True):
    """One event of `worker_restarts.json` (srt_runtime.restart.RestartEvent)."""

    worker: str
    exited_at: str | None = None
    relaunched_at: str | None = None
    ready_at: str | None = None
    outcome: str = ""


class RestartsView(msgspec.Struct, frozen=True, kw_only=True):
    events: tuple[RestartEventView, ...] = ()


class ClockFailureView(msgspec.Struct, frozen=True, kw_only=True):
    hostname: str
    offset_seconds: float


class ClockView(msgspec.Struct, frozen=True, kw_only=True):
    """The clock check of srt-telemetry's GPU power `manifest.json`."""

    clock_checks: dict[str, str] = {}
    clock_tolerance_seconds: float | None = None
    clock_sync_failures: tuple[ClockFailureView, ...] = ()


@dataclass(frozen=True, slots=True)
class Downtime:
    """A worker process (its plan name) was down from `down_unix` until `up_unix` (None: it never
    came back); `restarted`: the restart policy relaunched it."""

    worker: str
    down_unix: float
    up_unix: float | None
    restarted: bool


@dataclass(frozen=True, slots=True)
class ValidityInputs:
    #: The result JSON of each concurrency (sa-bench's own free-form document).
    results: dict[int, BenchResult]
    gate: HealthGateRecord | None
    #: None: no status events to read (the worker-exit check cannot run).
    downtimes: tuple[Downtime, ...] | None
    #: worker -> the unix times of its restarts' exit, relaunch and ready.
    restarts: dict[str, tuple[float, ...]]
    #: The power manifest's clock check (None: no power telemetry, or no manifest).
    clock: ClockView | None
    power_asked: bool
    single_host: bool
    expected: tuple[int, ...]


def parse_time(text: str | None) -> float | None:
    """Unix seconds of an ISO 8601 time with an offset (`2026-11-29T15:12:09.250+00:00`)."""
    if not text:
        return None
    try:
        return dt.datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def build_downtimes(events: Sequence[ProcessEventView]) -> tuple[Downtime, ...]:
    """Every worker exit and when the same plan process was back: its next `ready` event, else
    its relaunch's `started` (a worker without a readiness probe), else never (pure)."""
    workers = [e for e in events if e.event == "process" and e.kind == "worker"]
    out: list[Downtime] = []
    for i, e in enumerate(workers):
        down = parse_time(e.at)
        if e.what != "exited" or down is None:
            continue
        later = [w for w in workers[i + 1 :] if w.process == e.process]
        restarted = any(w.what == "restarted" for w in later)
        ready = next((w for w in later if w.what == "ready"), None)
        started = next((w for w in later if w.what == "started" and w.name != e.name), None)
        back = ready or started
        out.append(
            Downtime(
                worker=e.process or e.name,
                down_unix=down,
                up_unix=parse_time(back.at) if back is not None else None,
                restarted=restarted,
            )
        )
    return tuple(out)


def build_restart_times(doc: RestartsView) -> dict[str, tuple[float, ...]]:
    """worker -> its restarts' exit / relaunch / ready times (pure)."""
    out: dict[str, list[float]] = {}
    for e in doc.events:
        times = [parse_time(t) for t in (e.exited_at, e.relaunched_at, e.ready_at)]
        out.setdefault(e.worker, []).extend(t for t in times if t is not None)
    return {k: tuple(v) for k, v in sorted(out.items())}


_T = TypeVar("_T")


def _read(path: Path) -> bytes | None:
    return read_file(path, BenchValidityFileError)


def _decode(path: Path, kind: type[_T], what: str) -> _T | None:
    data = _read(path)
    if data is None:
        return None
    try:
        return msgspec.json.decode(data, type=kind)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise BenchValidityFileError(f"{path}: not {what}: {exc}; fix or remove the file") from exc


def _read_events(path: Path) -> list[ProcessEventView] | None:
    data = _read(path)
    if data is None:
        return None
    decoder = msgspec.json.Decoder(ProcessEventView)
    events: list[ProcessEventView] = []
    for line in data.splitlines():
        try:
            events.append(decoder.decode(line))
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue  # a torn last line, or one this reader does not know
    return events


def _results(log_dir: Path) -> dict[int, BenchResult]:
    try:
        docs = read_sa_bench_results(log_dir)
    except BenchDatasetError as exc:
        raise BenchValidityFileError(str(exc)) from exc
    out: dict[int, BenchResult] = {}
    for doc in docs:
        if doc.max_concurrency is not None:
            out.setdefault(doc.max_concurrency, doc)
    return out


def read_validity_inputs(
    log_dir: Path,
    *,
    power_dir: Path | None,
    expected: Sequence[int] = (),
    single_host: bool = False,
    events_file: Path | None = None,
) -> ValidityInputs:
    """Read every input; each file may be missing (its check is then `not_checked`)."""
    gate = _decode(log_dir / HEALTH_GATE_FILE, HealthGateRecord, "the health gate's record")
    if events_file is None:
        recorded = gate.events_file if gate is not None else None
        events_file = Path(recorded) if recorded else log_dir.parent / EVENTS_FILE
    events = _read_events(events_file)
    restarts = _decode(log_dir / RESTARTS_FILE, RestartsView, "a worker restarts record")
    clock = None
    if power_dir is not None:
        clock = _decode(power_dir / "manifest.json", ClockView, "a GPU power manifest")
    return ValidityInputs(
        results=_results(log_dir),
        gate=gate,
        downtimes=build_downtimes(events) if events is not None else None,
        restarts=build_restart_times(restarts) if restarts is not None else {},
        clock=clock,
        power_asked=power_dir is not None,
        single_host=single_host,
        expected=tuple(dict.fromkeys(expected)),
    )
