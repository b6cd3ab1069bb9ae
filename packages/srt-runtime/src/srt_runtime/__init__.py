"""srt_runtime: the in-allocation supervisor.

    from srt_runtime import FileStatusSink, LocalLauncher, SystemClock, read_plan, run_job
    plan, clock = read_plan(job_dir / "plan.json"), SystemClock()
    result = run_job(plan, LocalLauncher(job_dir / "logs"),
                     FileStatusSink(job_dir, plan.job_id, clock), job_dir=job_dir, clock=clock)

Logs go to the ``srt_runtime`` logger (``python -m srt_runtime`` sends them to stdout and the
sweep log); the library itself never prints.
"""

from __future__ import annotations

import logging

from srt_runtime.clock import Clock, SystemClock
from srt_runtime.diagnosis import Failure
from srt_runtime.errors import (
    AbortError,
    HealthGateError,
    LaunchError,
    PlanLoadError,
    ReadinessError,
    StageError,
    SupervisorError,
)
from srt_runtime.facts import AllocationFacts, read_facts
from srt_runtime.launch import Handle, Launcher, LocalLauncher
from srt_runtime.plan_io import plan_from_job_dir, read_plan, write_plan
from srt_runtime.run import RunResult, run_job
from srt_runtime.srun import SrunLauncher
from srt_runtime.status import FileStatusSink, Stage, StatusSink, StatusValue
from srt_runtime.supervisor import Supervisor

logging.getLogger("srt_runtime").addHandler(logging.NullHandler())

__all__ = [
    "AbortError",
    "AllocationFacts",
    "Clock",
    "Failure",
    "FileStatusSink",
    "Handle",
    "HealthGateError",
    "LaunchError",
    "Launcher",
    "LocalLauncher",
    "PlanLoadError",
    "ReadinessError",
    "RunResult",
    "SrunLauncher",
    "Stage",
    "StageError",
    "StatusSink",
    "StatusValue",
    "Supervisor",
    "SupervisorError",
    "SystemClock",
    "plan_from_job_dir",
    "read_facts",
    "read_plan",
    "run_job",
    "write_plan",
]
