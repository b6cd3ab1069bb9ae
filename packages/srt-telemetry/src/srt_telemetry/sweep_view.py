"""What the sweep report reads from a sweep folder and its job folders (docs/compare.md).

srt-telemetry imports no workspace package, so it decodes its own view of `sweep.json` (defined
once by `srt_schema.sweep_record`) and of the rollup fields it shows (`srt_schema.rollup`,
including the `validity` verdicts); `tests/test_contract_sweep.py` decodes the real structs' JSON
with these views. Unknown fields are ignored and every field has a default, so files from older or
newer writers still show.

A sweep folder is either a folder with `sweep.json` (what `srtctl apply` writes for a sweep), or
any folder whose sub-folders are job folders (`<job>/logs/benchmark-rollup.json`), for example an
output folder of jobs run one by one: then every job is its own configuration.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from srt_telemetry.errors import DashboardError
from srt_telemetry.targets import TargetView

__all__ = [
    "JobView",
    "PointRun",
    "SweepPointView",
    "SweepRecordView",
    "ValidityView",
    "read_job_view",
    "read_sweep_jobs",
    "run_wide_reasons",
]

SWEEP_FILE = "sweep.json"
ROLLUP = "logs/benchmark-rollup.json"
DASHBOARD = "logs/perf_dashboard.html"
_RESULT = re.compile(r"results_concurrency_(\d+)_gpus_(\d+)(?:_ctx_\d+_gen_\d+)?\.json")


class SweepPointView(msgspec.Struct, frozen=True, kw_only=True):
    index: int = 0
    job_name: str = ""
    params: dict[str, Any] = {}
    configuration: str = ""
    job_id: str | None = None


class SweepRecordView(msgspec.Struct, frozen=True, kw_only=True):
    name: str = ""
    source: str = ""
    jobs_base: str = "../.."
    points: tuple[SweepPointView, ...] = ()


class ReasonView(msgspec.Struct, frozen=True, kw_only=True):
    code: str = ""
    detail: str = ""


class ValidityView(msgspec.Struct, frozen=True, kw_only=True):
    """`validity` of a rollup run or the whole rollup: `verdict` valid | invalid."""

    verdict: str = "valid"
    reasons: tuple[ReasonView, ...] = ()

    @property
    def codes(self) -> str:
        return ", ".join(r.code for r in self.reasons)


class _Run(msgspec.Struct, frozen=True, kw_only=True):
    concurrency: int | None = None
    throughput_toks: float | None = None
    ttft_median_ms: float | None = None
    ttft_p99_ms: float | None = None
    tpot_median_ms: float | None = None
    itl_median_ms: float | None = None
    e2el_mean_ms: float | None = None
    validity: ValidityView | None = None


class _Capacity(msgspec.Struct, frozen=True, kw_only=True):
    targets: tuple[TargetView, ...] = ()


class _Rollup(msgspec.Struct, frozen=True, kw_only=True):
    runs: tuple[_Run, ...] = ()
    validity: ValidityView | None = None
    capacity: _Capacity | None = None


class _Status(msgspec.Struct, frozen=True, kw_only=True):
    status: str | None = None
    exit_code: int | None = None


class _Meta(msgspec.Struct, frozen=True, kw_only=True):
    job_name: str | None = None


@dataclass(frozen=True)
class PointRun:
    """One concurrency of one job, with the derived per-GPU and per-user rates."""

    concurrency: int
    output_tok_s: float | None
    gpus: int | None
    tpot_p50_ms: float | None
    ttft_p50_ms: float | None
    itl_p50_ms: float | None
    e2el_mean_ms: float | None
    valid: bool
    reasons: str

    @property
    def tok_s_per_gpu(self) -> float | None:
        if self.output_tok_s is None or not self.gpus:
            return None
        return self.output_tok_s / self.gpus

    @property
    def tok_s_per_user(self) -> float | None:
        """1000 / median TPOT (ms): the rollup CSV's "Output Token Throughput per User"."""
        if self.tpot_p50_ms is None or self.tpot_p50_ms <= 0:
            return None
        return 1000.0 / self.tpot_p50_ms


@dataclass(frozen=True)
class JobView:
    job_id: str
    job_dir: Path
    job_name: str
    configuration: str
    params: dict[str, Any] = field(default_factory=dict)
    runs: tuple[PointRun, ...] = ()
    #: Why the job shows no runs ("no job id yet", "no rollup (job failed, exit 1)"), else None.
    missing: str | None = None
    rollup_verdict: ValidityView | None = None
    dashboard: Path | None = None
    #: The latency targets the job declared (a capacity search's; targets.py).
    targets: tuple[TargetView, ...] = ()


def _decode(path: Path, kind: type[Any]) -> Any:
    try:
        return msgspec.json.decode(path.read_bytes(), type=kind)
    except FileNotFoundError:
        return None
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise DashboardError(f"{path}: cannot read: {exc}; fix or remove the file") from exc


def _gpus_by_concurrency(log_dir: Path) -> dict[int, int]:
    found: dict[int, int] = {}
    try:
        folders = [p for p in log_dir.iterdir() if p.is_dir()]
    except OSError:
        return found
    for folder in folders:
        for path in folder.iterdir():
            m = _RESULT.fullmatch(path.name)
            if m:
                found[int(m.group(1))] = int(m.group(2))
    return found


def run_wide_reasons(rollup: _Rollup) -> tuple[ReasonView, ...]:
    """The file's reasons that are not an invalid window's repeated (srt-bench validity copies
    every invalid window's reasons to the file, the detail prefixed with the concurrency): these
    invalidate every window."""
    top = rollup.validity
    if top is None or top.verdict != "invalid":
        return ()
    windows = [x for r in rollup.runs if r.validity is not None for x in r.validity.reasons]
    return tuple(
        t
        for t in top.reasons
        if not any(w.code == t.code and t.detail.endswith(w.detail) for w in windows)
    )


def read_job_view(
    job_dir: Path, *, configuration: str = "", params: dict[str, Any] | None = None
) -> JobView:
    """One job folder's runs, verdicts and dashboard (files absent: `missing` says what)."""
    meta = _decode(job_dir / f"{job_dir.name}.json", _Meta)
    name = (meta.job_name if meta is not None else None) or job_dir.name
    dashboard = job_dir / DASHBOARD
    common: dict[str, Any] = {
        "job_id": job_dir.name,
        "job_dir": job_dir,
        "job_name": name,
        "configuration": configuration or name,
        "params": params or {},
        "dashboard": dashboard if dashboard.is_file() else None,
    }
    rollup = _decode(job_dir / ROLLUP, _Rollup)
    if rollup is None:
        status = _decode(job_dir / "status.json", _Status)
        if status is None or status.status is None:
            why = "no rollup (the job has not written status.json)"
        else:
            code = f", exit {status.exit_code}" if status.exit_code is not None else ""
            why = f"no rollup (job {status.status}{code})"
        return JobView(missing=why, **common)
    gpus = _gpus_by_concurrency(job_dir / "logs")
    run_wide = run_wide_reasons(rollup)
    runs = []
    for r in sorted(rollup.runs, key=lambda r: r.concurrency or 0):
        if r.concurrency is None:
            continue
        v = r.validity
        own = [x.code for x in v.reasons] if v is not None and v.verdict == "invalid" else []
        codes = list(dict.fromkeys([*own, *(x.code for x in run_wide)]))
        valid = not codes and (v is None or v.verdict != "invalid")
        reasons = ", ".join(codes)
        runs.append(
            PointRun(
                concurrency=r.concurrency,
                output_tok_s=r.throughput_toks,
                gpus=gpus.get(r.concurrency),
                tpot_p50_ms=r.tpot_median_ms,
                ttft_p50_ms=r.ttft_median_ms,
                itl_p50_ms=r.itl_median_ms,
                e2el_mean_ms=r.e2el_mean_ms,
                valid=valid,
                reasons=reasons,
            )
        )
    targets = rollup.capacity.targets if rollup.capacity is not None else ()
    return JobView(runs=tuple(runs), rollup_verdict=rollup.validity, targets=targets, **common)


def read_sweep_jobs(sweep_dir: Path) -> tuple[str, list[JobView]]:
    """(title, jobs) of a sweep folder or of a folder of job folders."""
    sweep_dir = sweep_dir.resolve()
    if not sweep_dir.is_dir():
        raise DashboardError(f"{sweep_dir}: not a directory; pass a sweep folder or job folder")
    record = _decode(sweep_dir / SWEEP_FILE, SweepRecordView)
    if record is not None:
        base = (sweep_dir / record.jobs_base).resolve()
        jobs = []
        for p in sorted(record.points, key=lambda p: p.index):
            if p.job_id is None:
                jobs.append(
                    JobView(
                        job_id="-",
                        job_dir=base,
                        job_name=p.job_name,
                        configuration=p.configuration or p.job_name,
                        params=p.params,
                        missing="not started (no job id yet)",
                    )
                )
                continue
            jobs.append(
                read_job_view(base / p.job_id, configuration=p.configuration, params=p.params)
            )
        return f"Sweep {record.name or sweep_dir.name} ({record.source})", jobs
    folders = sorted(p for p in sweep_dir.iterdir() if (p / ROLLUP).is_file())
    if not folders:
        raise DashboardError(
            f"{sweep_dir}: no {SWEEP_FILE} and no job folder with {ROLLUP} below it; pass "
            "<output>/sweeps/<sweep> (written by srtctl apply) or a folder of job folders"
        )
    return f"Runs in {sweep_dir.name}", [read_job_view(p) for p in folders]
