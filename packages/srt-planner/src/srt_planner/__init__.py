"""srt_planner: pure launch planning (allocation, placement, ports, command lines, sbatch)."""

from __future__ import annotations

from srt_planner.allocation import plan_allocation
from srt_planner.assemble import plan_job
from srt_planner.errors import HostlistError, PlannerError, PlanningError
from srt_planner.hostlist import compress_hostlist, expand_hostlist
from srt_planner.plan import AllocationRequest, JobPlan, ProcessSpec
from srt_planner.sbatch import render_sbatch

__all__ = [
    "AllocationRequest",
    "HostlistError",
    "JobPlan",
    "PlannerError",
    "PlanningError",
    "ProcessSpec",
    "compress_hostlist",
    "expand_hostlist",
    "plan_allocation",
    "plan_job",
    "render_sbatch",
]
