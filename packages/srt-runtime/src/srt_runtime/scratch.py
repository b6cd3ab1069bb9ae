"""The job's scratch folder (``JobPlan.scratch``): private while the job runs, gone after it.

Services keep their stores there (NATS JetStream, etcd) and the tachometer its buffer
(docs/planner.md#scratch). It lives in the job's log folder, so no other job or user shares its
name; the runtime creates it with mode 0700 before anything starts and removes it after the
cleanup. A path that exists and is not a plain folder (a symlink, a file) is refused; a folder
left by an earlier run of the same job (a requeued Slurm job) is emptied, and the log says so.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from srt_runtime.errors import StageError

__all__ = ["prepare_scratch", "remove_scratch"]


def prepare_scratch(path: Path, log: logging.Logger) -> None:
    """Create ``path`` empty and private (0700); :class:`StageError` when it cannot be."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        raise StageError(
            f"the job's scratch {path} exists and is not a folder (a symlink or a file); "
            "remove it and run the job again"
        )
    if path.exists():
        log.warning("Scratch %s was left by an earlier run of this job: emptied", path)
        shutil.rmtree(path)
    try:
        path.mkdir(mode=0o700)
    except OSError as exc:
        raise StageError(f"the job's scratch {path} cannot be created: {exc}") from exc
    path.chmod(0o700)  # whatever the umask


def remove_scratch(path: Path, log: logging.Logger) -> None:
    """Remove ``path`` and everything in it; a failure is logged, never the job's."""
    if path.is_symlink() or not path.exists():
        return
    try:
        shutil.rmtree(path)
    except OSError as exc:
        log.warning("Scratch %s not removed: %s", path, exc)
