"""The allocation as Slurm describes it to the batch script, read once at the edge."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from srt_runtime.errors import PlanLoadError

__all__ = ["AllocationFacts", "read_facts"]


class AllocationFacts(msgspec.Struct, frozen=True, kw_only=True):
    """What the job was granted (docs/planner.md#allocation-facts)."""

    job_id: str
    #: The allocation's hostlist expression (``node-[01-04]``).
    nodelist: str
    #: Hostlist expression of each heterogeneous component, in order (empty: not a het job).
    het_groups: tuple[str, ...] = ()
    #: ``$SRTCTL_OUTPUT_DIR`` (``<output>/<job_id>``), if the batch script set it.
    output_dir: str | None = None
    #: ``$SRTCTL_SETUP_SCRIPT``: the CLI's ``--setup-script`` override.
    setup_script: str | None = None


def read_facts(environ: Mapping[str, str]) -> AllocationFacts:
    """Read the ``SLURM_*`` / ``SRTCTL_*`` variables; refuse clearly outside a Slurm job."""
    job_id = environ.get("SLURM_JOB_ID") or environ.get("SLURM_JOBID")
    if not job_id:
        raise PlanLoadError(
            "Not running in SLURM: SLURM_JOB_ID is not set; run inside an allocation, or pass "
            "an already-planned job with --plan <plan.json>"
        )
    nodelist = environ.get("SLURM_JOB_NODELIST") or environ.get("SLURM_NODELIST")
    if not nodelist:
        raise PlanLoadError(f"job {job_id}: SLURM_JOB_NODELIST is not set; cannot plan the job")
    het: list[str] = []
    size = environ.get("SLURM_HET_SIZE")
    if size:
        for i in range(int(size)):
            group = environ.get(f"SLURM_JOB_NODELIST_HET_GROUP_{i}")
            if not group:
                raise PlanLoadError(
                    f"job {job_id}: SLURM_HET_SIZE={size} but "
                    f"SLURM_JOB_NODELIST_HET_GROUP_{i} is not set"
                )
            het.append(group)
    return AllocationFacts(
        job_id=job_id,
        nodelist=nodelist,
        het_groups=tuple(het),
        output_dir=environ.get("SRTCTL_OUTPUT_DIR") or None,
        setup_script=environ.get("SRTCTL_SETUP_SCRIPT") or None,
    )
