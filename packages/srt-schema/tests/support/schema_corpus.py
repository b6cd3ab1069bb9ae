"""Where the public recipe corpus is, and its INDEX rows (shared by srt-schema's tests).

On ``sys.path`` through pytest's ``pythonpath`` setting, so test modules import it by name.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[4]

#: Stands for a corpus-parametrized case when the corpus is absent, so that collection never
#: crashes; the case carries the ``corpus`` marker and the root conftest skips it in one line.
ABSENT = pytest.param(None, id="corpus-absent", marks=pytest.mark.corpus)


def corpus_root() -> Path:
    """``$SRT_CORPUS``, else ``<repo>/../shared/corpus`` (it may be absent: see corpus_present)."""
    return Path(os.environ.get("SRT_CORPUS") or REPO.parent / "shared" / "corpus")


def corpus_present() -> bool:
    return (corpus_root() / "INDEX.md").is_file()


def or_absent(values: list[Any]) -> list[Any]:
    """``values``, or the single skipped ``ABSENT`` case when the corpus is not there."""
    return values if corpus_present() else [ABSENT]


def corpus_index() -> list[dict[str, str]]:
    """The INDEX.md rows: ``layout`` (v1/v2), ``rel`` (owner/repo/path), ``valid`` (yes/no)."""
    rows: list[dict[str, str]] = []
    if not corpus_present():
        return rows
    for line in (corpus_root() / "INDEX.md").read_text().splitlines():
        if not line.startswith(("| v1 |", "| v2 |")):
            continue
        cols = [c.strip() for c in line.split("|")]
        rows.append(
            {"layout": cols[1], "rel": f"{cols[2]}/{cols[3]}", "valid": cols[10].split(":")[0]}
        )
    return rows
