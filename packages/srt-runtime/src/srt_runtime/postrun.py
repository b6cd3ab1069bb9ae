"""After the run: the dashboard and the reporting steps, wired into ``run_job(before_final=...)``.

Everything comes from the job folder the run wrote and the plan's reporting session: nothing
here reads the recipe or ``srtslurm.yaml``. Nothing here changes the job's exit code: the
dashboard is best effort (a failure is one warning with its cause), and the reporting session's
steps are bounded and return results.
"""

from __future__ import annotations

import json
import logging
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec

from srt_planner.benchmark import HF_MODEL_RECORD
from srt_runtime.files import write_atomic
from srt_runtime.lockfile import read_dynamo_installs, update_lockfile
from srt_runtime.reporting.lock_sections import build_lock_sections, read_fingerprints
from srt_runtime.reporting.reproduce import REFERENCE_FILE, ReproductionReference, build_report
from srt_runtime.reporting.session import ReportingSession
from srt_runtime.sweep_finish import finish_sweep_job
from srt_schema.fetch import FETCH_RECORD, FetchRecord

__all__ = [
    "DASHBOARD_TIMEOUT",
    "build_dashboard",
    "post_run_hook",
    "record_results",
    "write_reproduction_report",
]

#: Seconds the dashboard may take before it is abandoned.
DASHBOARD_TIMEOUT = 120.0


def build_dashboard(log_dir: Path, *, python: str, log: logging.Logger) -> bool:
    """``srt-telemetry dashboard <log_dir>`` as a process (the runtime never imports it)."""
    argv = [python, "-m", "srt_telemetry", "dashboard", str(log_dir)]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=DASHBOARD_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("Dashboard not built: %s", exc)
        return False
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        log.warning(
            "Dashboard not built (exit %d): %s", done.returncode, detail[-1] if detail else ""
        )
        return False
    log.info("Dashboard: %s", log_dir / "perf_dashboard.html")
    return True


def _read_json(path: Path, log: logging.Logger) -> Any:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("Not recorded in the lockfile: %s: %s", path.name, exc)
        return None


def _read_fetch_record(log_dir: Path, log: logging.Logger) -> list[Any]:
    """``logs/datasets_fetched.json`` (srt_schema.fetch.FetchRecord) as lock entries."""
    path = log_dir / FETCH_RECORD
    try:
        record = msgspec.json.decode(path.read_bytes(), type=FetchRecord)
    except FileNotFoundError:
        return []
    except (OSError, msgspec.DecodeError) as exc:
        log.warning("Not recorded in the lockfile: %s: %s", path.name, exc)
        return []
    return [msgspec.to_builtins(d) for d in record.datasets]


def record_results(job_dir: Path, log_dir: Path, *, log: logging.Logger) -> None:
    """The run's outcome into ``recipe.lock.yaml``: results, fingerprints, resources; and, for
    a run started from a lockfile, ``logs/reproduction-report.txt``."""
    fingerprints = read_fingerprints(log_dir)
    sections = build_lock_sections(
        fingerprints=fingerprints or None,
        resource_snapshot=_read_json(log_dir / "resource_snapshot.json", log),
        results=_read_json(log_dir / "benchmark-rollup.json", log),
    )
    hub_model = _read_json(log_dir / HF_MODEL_RECORD, log)
    if hub_model is not None:
        # the hub commit the benchmark's tokenizer resolved to (srt-bench tokenizer --record)
        sections["hf_model"] = hub_model
    installs = read_dynamo_installs(log_dir)
    if installs:
        sections["dynamo_install"] = installs
    fetched = _read_fetch_record(log_dir, log)
    if fetched:
        # what the benchmark step downloaded or reused, with its sha256 (srt_bench.fetch)
        sections["datasets"] = fetched
    if sections:
        update_lockfile(job_dir, **sections)
    write_reproduction_report(job_dir, log_dir, fingerprints, log=log)


def write_reproduction_report(
    job_dir: Path, log_dir: Path, fingerprints: Mapping[str, Any], *, log: logging.Logger
) -> Path | None:
    """Compare with the lock the job was applied from (``reproduce_from.json``), if any."""
    source = job_dir / REFERENCE_FILE
    try:
        reference = msgspec.json.decode(source.read_bytes(), type=ReproductionReference)
    except FileNotFoundError:
        return None
    except (OSError, msgspec.DecodeError) as exc:
        log.warning("No reproduction report: %s: %s", source, exc)
        return None
    report = build_report(reference, fingerprints, job_id=job_dir.name)
    path = log_dir / "reproduction-report.txt"
    write_atomic(path, report.text.encode())
    if report.issues:
        log.warning(
            "Reproduction report: %d differences from %s (%s)",
            len(report.issues),
            reference.source,
            path,
        )
    else:
        log.info("Reproduction report: matches %s (%s)", reference.source, path)
    return path


def post_run_hook(
    log_dir: Path, session: ReportingSession, *, python: str, log: logging.Logger
) -> Callable[[int], None]:
    """What ``run_job`` calls after the lockfile, before the final status event."""

    def hook(exit_code: int) -> None:
        record_results(log_dir.parent, log_dir, log=log)
        build_dashboard(log_dir, python=python, log=log)
        finish_sweep_job(log_dir.parent, python=python, log=log)  # the last job's sweep report
        session.finish(exit_code=exit_code)

    return hook
