"""``recipe.lock.yaml``: the recipe as run plus a ``lock:`` block, completed at the end of a run.

The submit side (or the start of the run) writes the first version; the end of the run adds the
outcome and the worker restart record. A missing lock starts from ``config.yaml``. What each
node's Dynamo install put in place (``logs/dynamo_install_<node>.json``, written by the plan's
install script, srt_planner.dynamo_install) goes under ``lock.dynamo_install``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from srt_runtime.files import write_atomic
from srt_runtime.reporting.lock_sections import order_lock

__all__ = ["read_dynamo_installs", "update_lockfile"]

_INSTALL_PREFIX = "dynamo_install_"


def _load(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        return {}
    return data if isinstance(data, dict) else {}


def update_lockfile(job_dir: Path, **lock: object) -> Path:
    """Merge ``lock`` into the ``lock:`` block of ``job_dir/recipe.lock.yaml`` (created from
    ``config.yaml`` if missing); the start of a run writes its status, the end its outcome."""
    path = job_dir / "recipe.lock.yaml"
    doc = _load(path) or _load(job_dir / "config.yaml")
    current = doc.get("lock")
    merged = dict(current) if isinstance(current, dict) else {}
    merged.update(lock)
    doc["lock"] = order_lock(merged)
    write_atomic(path, yaml.safe_dump(doc, sort_keys=False).encode())
    return path


def read_dynamo_installs(log_dir: Path) -> dict[str, Any]:
    """``dynamo_install_<node>.json`` records keyed by node, sorted; an unreadable one is kept
    as ``{"unreadable": <reason>}``."""
    found: dict[str, Any] = {}
    for path in sorted(log_dir.glob(f"{_INSTALL_PREFIX}*.json")):
        try:
            found[path.stem[len(_INSTALL_PREFIX) :]] = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            found[path.stem[len(_INSTALL_PREFIX) :]] = {
                "unreadable": f"{type(exc).__name__}: {exc}"
            }
    return found
