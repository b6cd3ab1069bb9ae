"""Where the public recipe corpus is, and its INDEX rows (shared by srt-schema's tests).

On ``sys.path`` through pytest's ``pythonpath`` setting, so test modules import it by name.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[4]


def corpus_root() -> Path:
    """``$SRT_CORPUS``, else ``<repo>/../shared/corpus``; its absence is a failure, not a skip."""
    root = Path(os.environ.get("SRT_CORPUS", REPO.parent / "shared" / "corpus"))
    if not (root / "INDEX.md").is_file():
        raise RuntimeError(f"recipe corpus not found at {root}; set SRT_CORPUS")
    return root


def corpus_index() -> list[dict[str, str]]:
    """The INDEX.md rows: ``layout`` (v1/v2), ``rel`` (owner/repo/path), ``valid`` (yes/no)."""
    rows = []
    for line in (corpus_root() / "INDEX.md").read_text().splitlines():
        if not line.startswith(("| v1 |", "| v2 |")):
            continue
        cols = [c.strip() for c in line.split("|")]
        rows.append(
            {"layout": cols[1], "rel": f"{cols[2]}/{cols[3]}", "valid": cols[10].split(":")[0]}
        )
    return rows
