"""The end of a sweep: the last job to finish writes the sweep report (docs/compare.md).

`srtctl apply` keeps `<output>/sweeps/<name>/sweep.json` listing every point's job id
(srt_schema.sweep_record). At the end of each job, :func:`finish_sweep_job` finds the sweep whose
points list this job, creates `done/<job_id>` in its folder, and, when every point has a job id and
a marker, runs `srt-telemetry sweep-report <sweep folder>` as a process (the runtime never imports
srt-telemetry). Best effort: a failure is one warning; the job's exit code never changes.
"""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Iterable
from pathlib import Path

import msgspec

from srt_schema.sweep_record import (
    DONE_DIR,
    REPORT_FILE,
    SWEEP_FILE,
    SWEEPS_DIR,
    SweepRecord,
    decode_sweep_record,
)

__all__ = ["REPORT_TIMEOUT", "find_sweep", "finish_sweep_job", "is_sweep_complete"]

#: Seconds the sweep report may take before it is abandoned.
REPORT_TIMEOUT = 120.0


def find_sweep(
    output_base: Path, job_id: str, *, log: logging.Logger
) -> tuple[Path, SweepRecord] | None:
    """The sweep folder (under `<output_base>/sweeps/`) whose points list `job_id`, if any."""
    root = output_base / SWEEPS_DIR
    try:
        folders = sorted(p for p in root.iterdir() if p.is_dir())
    except OSError:
        return None
    for folder in folders:
        path = folder / SWEEP_FILE
        try:
            record = decode_sweep_record(path.read_bytes())
        except FileNotFoundError:
            continue
        except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
            log.warning("Sweep record skipped: %s: %s", path, exc)
            continue
        if any(p.job_id == job_id for p in record.points):
            return folder, record
    return None


def is_sweep_complete(record: SweepRecord, done: Iterable[str]) -> bool:
    """Every point has a job id and that job has finished (pure)."""
    finished = set(done)
    return bool(record.points) and all(
        p.job_id is not None and p.job_id in finished for p in record.points
    )


def finish_sweep_job(job_dir: Path, *, python: str, log: logging.Logger) -> Path | None:
    """Mark this job done in its sweep; render the report if it was the last. Returns the
    report's path when this job wrote it."""
    found = find_sweep(job_dir.parent, job_dir.name, log=log)
    if found is None:
        return None
    folder, _ = found
    done = folder / DONE_DIR
    try:
        done.mkdir(exist_ok=True)
        (done / job_dir.name).touch()
        # Re-read after the marker: the record may have gained job ids meanwhile.
        record = decode_sweep_record((folder / SWEEP_FILE).read_bytes())
        markers = [p.name for p in done.iterdir()]
    except (OSError, msgspec.DecodeError, msgspec.ValidationError) as exc:
        log.warning("Sweep report not considered: %s: %s", folder, exc)
        return None
    if not is_sweep_complete(record, markers):
        waiting = sum(1 for p in record.points if p.job_id is None or p.job_id not in markers)
        log.info("Sweep %s: %d of %d jobs still to finish", folder, waiting, len(record.points))
        return None
    argv = [python, "-m", "srt_telemetry", "sweep-report", str(folder)]
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=REPORT_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("Sweep report not written: %s", exc)
        return None
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        log.warning(
            "Sweep report not written (exit %d): %s", proc.returncode, detail[-1] if detail else ""
        )
        return None
    report = folder / REPORT_FILE
    log.info("Sweep report: %s", report)
    return report
