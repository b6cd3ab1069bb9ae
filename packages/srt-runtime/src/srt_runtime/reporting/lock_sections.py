"""The reporting parts of ``recipe.lock.yaml``'s ``lock:`` mapping (docs/recipes.md#lockfile), as
plain data for the supervisor's lockfile writer: ``verification``, ``fingerprints``,
``resolved``, ``resource_snapshot``, ``results``, the documented key order and ``integrity``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec
import yaml

from srt_runtime.reporting.identity import Verification

__all__ = [
    "LOCK_KEY_ORDER",
    "build_integrity",
    "build_lock_sections",
    "first_fingerprint",
    "order_lock",
    "read_fingerprints",
]

LOCK_KEY_ORDER = (
    "version",
    "generated_at",
    "slurm",
    "resolved",
    "hf_model",
    "verification",
    "fingerprints",
    "resource_snapshot",
    "worker_restarts",
    "results",
)
_PREFIX = "fingerprint_"


def read_fingerprints(log_dir: Path) -> dict[str, Any]:
    """``fingerprint_<mode>_w<i>.json`` files (in ``log_dir`` or ``log_dir/fingerprints``) keyed
    ``<mode>_w<i>``, sorted; an unreadable file is kept as ``{"unreadable": <reason>}``."""
    found: dict[str, Any] = {}
    paths = [*log_dir.glob(f"{_PREFIX}*.json"), *log_dir.glob(f"fingerprints/{_PREFIX}*.json")]
    for path in sorted(paths, key=lambda p: p.name):
        key = path.stem[len(_PREFIX) :]
        try:
            found[key] = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            found[key] = {"unreadable": f"{type(exc).__name__}: {exc}"}
    return dict(sorted(found.items()))


def first_fingerprint(fingerprints: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The fingerprint verification uses: the first readable one by key."""
    for key in sorted(fingerprints):
        value = fingerprints[key]
        if isinstance(value, Mapping) and "unreadable" not in value:
            return value
    return None


def build_lock_sections(
    *,
    verification: Verification | None = None,
    fingerprints: Mapping[str, Any] | None = None,
    resolved: Mapping[str, Any] | None = None,
    resource_snapshot: Any = None,
    results: Any = None,
) -> dict[str, Any]:
    """The sections to merge into ``lock:`` (pure; unset ones are left out)."""
    sections: dict[str, Any] = {}
    if resolved is not None:
        sections["resolved"] = {k: v for k, v in resolved.items() if v is not None}
    if verification is not None:
        sections["verification"] = msgspec.to_builtins(verification)
    if fingerprints:
        sections["fingerprints"] = dict(fingerprints)
    if resource_snapshot is not None:
        sections["resource_snapshot"] = resource_snapshot
    if results is not None:
        sections["results"] = results
    return sections


def build_integrity(lock: Mapping[str, Any]) -> str:
    """SHA-256 of the YAML dump (keys sorted) of every ``lock`` key but ``integrity``."""
    body = {k: v for k, v in lock.items() if k != "integrity"}
    text = yaml.safe_dump(msgspec.to_builtins(body), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def order_lock(lock: Mapping[str, Any]) -> dict[str, Any]:
    """``lock`` in the documented key order, other keys after, ``integrity`` recomputed last."""
    ordered = {k: lock[k] for k in LOCK_KEY_ORDER if k in lock}
    ordered.update({k: v for k, v in lock.items() if k not in ordered and k != "integrity"})
    ordered["integrity"] = build_integrity(ordered)
    return ordered
