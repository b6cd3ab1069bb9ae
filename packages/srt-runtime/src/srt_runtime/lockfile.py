"""``recipe.lock.yaml``: the recipe as run plus a ``lock:`` block, completed at the end of a run.

The submit side (or the start of the run) writes the first version; the end of the run adds the
outcome and the worker restart record. A missing lock starts from ``config.yaml``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from srt_runtime.files import write_atomic

__all__ = ["complete_lockfile"]


def _load(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        return {}
    return data if isinstance(data, dict) else {}


def complete_lockfile(
    job_dir: Path,
    *,
    job_id: str,
    exit_code: int,
    status: str,
    finished_at: str,
    worker_restarts: object,
) -> Path:
    """Add the run's outcome to ``job_dir/recipe.lock.yaml`` (created if missing)."""
    path = job_dir / "recipe.lock.yaml"
    doc = _load(path) or _load(job_dir / "config.yaml")
    lock = doc.get("lock")
    lock = dict(lock) if isinstance(lock, dict) else {}
    lock.update(
        job_id=job_id,
        status=status,
        exit_code=exit_code,
        finished_at=finished_at,
        worker_restarts=worker_restarts,
    )
    doc["lock"] = lock
    write_atomic(path, yaml.safe_dump(doc, sort_keys=False).encode())
    return path
