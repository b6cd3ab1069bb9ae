"""``python -m srt_runtime run --job-dir DIR [--plan plan.json]``: run one job in place.

This is what the sbatch script calls on the first node (and what ``srtctl apply`` calls for
local runs). The only place in srt_runtime that prints and exits; exit codes: README.md.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from pathlib import Path
from types import FrameType

from srt_runtime.clock import SystemClock
from srt_runtime.errors import SupervisorError
from srt_runtime.launch import Launcher, LocalLauncher
from srt_runtime.plan_io import plan_from_job_dir, read_plan, write_plan
from srt_runtime.postrun import post_run_hook
from srt_runtime.reporting.session import ReportingSession
from srt_runtime.reporting.status_sink import build_started_metadata
from srt_runtime.resources import build_resource_snapshot, write_resource_snapshot
from srt_runtime.run import run_job
from srt_runtime.srun import SrunLauncher
from srt_runtime.status import EventLog, FileStatusSink
from srt_runtime.supervisor import Supervisor
from srt_runtime.watchdog import Watchdog, start_watchdog

_FORMAT = "%(asctime)s %(levelname)s %(message)s"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m srt_runtime")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run one job (the in-allocation supervisor)")
    run.add_argument("--job-dir", type=Path, required=True, help="<output>/<job_id>")
    run.add_argument("--plan", type=Path, help="an already-planned JobPlan (plan.json)")
    run.add_argument(
        "--serve-only",
        action="store_true",
        help="serve without a benchmark (also SRTCTL_SERVE_ONLY=1, what srtctl apply exports)",
    )
    return parser


def _logger(job_dir: Path, job_id: str, *, sweep_log: bool) -> logging.Logger:
    logger = logging.getLogger("srt_runtime")
    logger.setLevel(logging.INFO)
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stdout)]
    if sweep_log:
        # Under Slurm stdout already is logs/sweep_<job_id>.log (the batch --output).
        handlers.append(logging.FileHandler(job_dir / "logs" / f"sweep_{job_id}.log"))
    for handler in handlers:
        handler.setFormatter(logging.Formatter(_FORMAT))
        logger.addHandler(handler)
    return logger


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    job_dir: Path = args.job_dir.resolve()
    try:
        if args.plan is not None:
            plan = read_plan(args.plan)
        else:
            # `srtctl apply --serve-only` reaches a Slurm job as SRTCTL_SERVE_ONLY=1
            serve_only = args.serve_only or os.environ.get("SRTCTL_SERVE_ONLY") == "1"
            plan = plan_from_job_dir(job_dir, os.environ, cwd=Path.cwd(), serve_only=serve_only)
    except SupervisorError as exc:
        print(f"srt_runtime: {exc}", file=sys.stderr)
        return 1
    log_dir = job_dir / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    write_plan(plan, job_dir / "plan.json")
    logger = _logger(job_dir, plan.job_id, sweep_log=plan.launcher == "local")
    snapshot = build_resource_snapshot(
        plan, plan.node_roles.head, os.environ, os.sched_getaffinity(0)
    )
    write_resource_snapshot(log_dir, snapshot)
    logger.info(
        "Resources on %s: %d CPUs (SLURM_JOB_CPUS_PER_NODE=%s, SLURM_CPUS_ON_NODE=%s)",
        snapshot.node,
        snapshot.affinity_cpus,
        snapshot.job_cpus_per_node,
        snapshot.cpus_on_node,
    )
    if snapshot.warning is not None:
        logger.warning("%s", snapshot.warning)
    clock = SystemClock()
    launcher: Launcher
    watchdog: Watchdog | None = None
    if plan.launcher == "local":
        local = LocalLauncher(log_dir, claims=plan.processes)
        # Kills every process of the job if this supervisor dies, SIGKILL included.
        watchdog = start_watchdog(local.record, local.token)
        launcher = local
    else:
        python = sys.executable if plan.container_runtime == "none" else None
        launcher = SrunLauncher(log_dir, job_id=plan.job_id, python=python)
    events = EventLog(job_dir, plan.job_id, clock)
    sup = Supervisor(plan, launcher, log_dir=log_dir, clock=clock, logger=logger, events=events)

    def _on_signal(signum: int, _frame: FrameType | None) -> None:
        sup.request_stop(f"received {signal.Signals(signum).name}")

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    # After planning nothing reads the recipe or srtslurm.yaml again: reporting is the plan's.
    started = build_started_metadata(
        plan,
        log_dir=str(log_dir),
        affinity_cpus=snapshot.affinity_cpus,
        cpu_warning=snapshot.warning,
    )
    session = ReportingSession.open(
        plan.reporting,
        job_id=plan.job_id,
        job_dir=job_dir,
        environ=os.environ,
        local=FileStatusSink(job_dir, plan.job_id, clock, pid=os.getpid(), log=events),
        wall=clock.wall,
        cluster=plan.cluster,
        started_metadata=started,
        log=logger.log,
    )
    hook = post_run_hook(log_dir, session, python=sys.executable, log=logger)
    try:
        result = run_job(
            plan,
            launcher,
            session.sink,
            job_dir=job_dir,
            clock=clock,
            supervisor=sup,
            before_final=hook,
        )
    except Exception:
        # A bug in the supervisor: cleanup already ran (run_job's finally); say so and exit 1.
        logger.exception("Fatal error")
        return 1
    finally:
        session.close(5.0)
        if watchdog is not None:
            watchdog.close()
    # The diagnosis of a failed run is logged last, so it ends both stdout and the sweep log.
    return result.exit_code


if __name__ == "__main__":
    sys.exit(main())
