"""Every document the repository cites is in the repository (issue 15, item 2).

Scans every tracked text file (golden files and corpus-derived data excepted) for citations of
documents: ``name.md`` (optionally ``#anchor``), ``§n.m`` and ``Qn``. A cited ``.md`` must be a
tracked file (by path from the repo root or the citing file, or by file name); its anchor must be
a heading of that file; a ``Qn`` after a cited file must be a decision heading of that file; a
bare ``Qn`` or ``§`` must be a heading of some file under ``docs/``.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

#: Paths whose text comes from outside (rendered artifacts and recipe-corpus copies).
SKIP = re.compile(
    r"^tests/test_citations\.py$|(^|/)golden(/|$)|(^|/)corpus(/|$)|\.lock$|(^|/)uv\.lock$"
)
#: Generated from the recipe schema: its descriptions are the reference's text and name its docs.
GENERATED = re.compile(r"(^|/)schemas/[\w.-]+\.json$|srt_schema/recipe\.py$")
#: ``.md`` names that are not citations: files a run writes, the corpus index read via SRT_CORPUS.
NOT_CITED = {"ai_analysis.md", "INDEX.md"}
#: The file names a citation names.
MD = re.compile(r"(?<![\w./-])((?:\.{1,2}/)*[\w./-]*[\w-]+\.md)(?:#([\w-]+))?")
SECTION = re.compile(r"§\s*\d+(?:\.\d+)*")
QID = re.compile(r"(?<![\w-])Q(\d+)\b")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.MULTILINE)
#: How far before a ``Qn`` a file name still counts as the file the ``Qn`` belongs to.
Q_REACH = 40


def _tracked() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [p for p in out.splitlines() if p and not SKIP.search(p) and not GENERATED.search(p)]


def _slug(heading: str) -> str:
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    found = {_slug(h) for h in HEADING.findall(text)}
    found |= set(re.findall(r"<a id=\"([\w-]+)\"", text))
    return found


def _decisions(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    return {m for h in HEADING.findall(text) for m in re.findall(r"^Q(\d+):", h)}


def _resolve(
    cited: str, citing: str, tracked: set[str], by_name: dict[str, list[str]]
) -> list[str]:
    for candidate in (cited, (Path(citing).parent / cited).as_posix()):
        norm = os.path.normpath(candidate)
        if norm in tracked:
            return [norm]
    if "/" not in cited:
        return by_name.get(cited, [])
    return []


def find_bad_citations(files: list[str]) -> list[str]:
    """``path:line: what`` for every citation of a document that is not in the repository."""
    tracked = set(_tracked()) | set(files)
    by_name: dict[str, list[str]] = {}
    for p in tracked:
        if p.endswith(".md"):
            by_name.setdefault(Path(p).name, []).append(p)
    docs = [p for p in tracked if p.startswith("docs/") and p.endswith(".md")]
    doc_qs = set().union(*(_decisions(REPO / p) for p in docs)) if docs else set()
    bad: list[str] = []
    for citing in files:
        try:
            text = (REPO / citing).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for number, line in enumerate(text.splitlines(), 1):
            where = f"{citing}:{number}"
            targets: list[tuple[int, list[str]]] = []
            for m in MD.finditer(line):
                cited, anchor = m.group(1), m.group(2)
                if Path(cited).name in NOT_CITED:
                    continue
                hits = _resolve(cited, citing, tracked, by_name)
                if not hits:
                    bad.append(f"{where}: cites {cited}, which is not in the repository")
                    continue
                targets.append((m.end(), hits))
                if anchor and not any(anchor in _anchors(REPO / h) for h in hits):
                    bad.append(f"{where}: {cited} has no heading #{anchor}")
            for m in SECTION.finditer(line):
                bad.append(f"{where}: cites {m.group(0)}; cite a docs/ file and its #anchor")
            for m in QID.finditer(line):
                near = [h for end, h in targets if 0 <= m.start() - end <= Q_REACH]
                if near:
                    if not any(m.group(1) in _decisions(REPO / h) for h in near[-1]):
                        bad.append(f"{where}: {near[-1][0]} has no decision Q{m.group(1)}")
                elif m.group(1) not in doc_qs:
                    bad.append(f"{where}: Q{m.group(1)} is not a decision of any docs/ file")
    return bad


def test_every_cited_document_is_in_the_repository() -> None:
    bad = find_bad_citations(_tracked())
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("see planner-and-runtime.md §1.6", "cites planner-and-runtime.md"),
        ("ports (§1.6)", "cites §1.6"),
        ("docs/planner.md#no-such-heading", "has no heading #no-such-heading"),
        ("(docs/planner.md, Q99)", "has no decision Q99"),
        ("bare Q98 here", "Q98 is not a decision"),
    ],
)
def test_a_citation_outside_the_repository_is_found(
    tmp_path: Path, line: str, expected: str
) -> None:
    probe = REPO / "tests" / f"_citation_probe_{tmp_path.name}.txt"
    probe.write_text(line + "\n", encoding="utf-8")
    try:
        bad = find_bad_citations([probe.relative_to(REPO).as_posix()])
    finally:
        probe.unlink()
    assert any(expected in b for b in bad), bad


def test_a_good_citation_passes(tmp_path: Path) -> None:
    probe = REPO / "tests" / f"_citation_probe_{tmp_path.name}.txt"
    probe.write_text("(docs/planner.md#ports; docs/planner.md, Q14)\n", encoding="utf-8")
    try:
        assert find_bad_citations([probe.relative_to(REPO).as_posix()]) == []
    finally:
        probe.unlink()
