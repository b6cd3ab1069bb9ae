"""srt_runtime: the in-allocation supervisor.

    from srt_runtime.run import run_job
    result = run_job(plan, LocalLauncher(log_dir), FileStatusSink(job_dir, plan.job_id, clock),
                     job_dir=job_dir, clock=SystemClock())

Logs go to the ``srt_runtime`` logger (``python -m srt_runtime`` sends them to stdout and the
sweep log); the library itself never prints.
"""

from __future__ import annotations

import logging

logging.getLogger("srt_runtime").addHandler(logging.NullHandler())
