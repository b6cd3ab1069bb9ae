"""The validity verdict as a finalize step (docs/telemetry-and-bench.md#validity).

Every job with a benchmark ends its finalize steps with ``srt-bench validity``: after power
finalization and ``srt-bench energy`` (the power verdict it judges) and after ``srt-bench
profiles``, it writes a ``valid`` / ``invalid`` verdict per window and for the run into
``benchmark-rollup.json``. What the planner knows goes on its command line: the GPU power folder
when GPU power telemetry is asked for (``--power-dir``: its verdict and clock check count), the
planned concurrencies of sa-bench (each must have a run), and ``--single-host`` on the local
launcher (every node is this host, so the clocks agree). A verdict never fails the job.
"""

from __future__ import annotations

from srt_planner.context import PlanContext
from srt_planner.plan import FinalizeStep
from srt_schema.validate.benchmark_rules import parse_concurrencies

__all__ = ["validity_finalize"]

#: Benchmark types whose rollup has one run per planned concurrency.
_PER_CONCURRENCY = frozenset({"sa-bench"})


def validity_finalize(ctx: PlanContext, *, benchmark: bool) -> tuple[FinalizeStep, ...]:
    """The ``validity`` step (none without a benchmark or for ``manual``)."""
    b = ctx.recipe.benchmark
    if not benchmark or b.type == "manual":
        return ()
    argv = ["srt-bench", "validity", "--log-dir", ctx.log_dir]
    tel = ctx.recipe.telemetry
    if tel.enabled and tel.dcgm_exporter is not None:
        argv += ["--power-dir", f"{ctx.log_dir}/{tel.storage_subdir}"]
    if b.type in _PER_CONCURRENCY:
        for c in dict.fromkeys(parse_concurrencies(b.concurrencies) or ()):
            argv += ["--expect-concurrency", str(c)]
    if ctx.local:
        argv.append("--single-host")
    return (
        FinalizeStep(
            name="validity", argv=tuple(argv), log_file="validity.out", timeout_seconds=60.0
        ),
    )
