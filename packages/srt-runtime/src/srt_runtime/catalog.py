"""The failure catalog: which known cause a failed run's evidence names, and its fix.

The causes are data (``failure_catalog.yaml`` in this package, decoded into :class:`Catalog`); this
module only matches them. Evidence is the failed process's reason, its fatal line and the tail of
its log, plus its exit code or signal. Causes are tried in the file's order: the first one a
pattern of which matches a line, and none of whose ``unless`` patterns matches any line, wins; a
cause without patterns (exit codes or signals only) is tried only when no pattern cause matched.
No match is "unknown cause", with the evidence left to the reader (the diagnosis's log lines).

Pure but for :func:`load_catalog`, which reads the packaged file once.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from importlib import resources
from typing import Final

import msgspec
import yaml

__all__ = [
    "CATALOG_FILE",
    "UNKNOWN_CAUSE",
    "Catalog",
    "Cause",
    "CauseMatch",
    "Evidence",
    "Pattern",
    "decode_catalog",
    "load_catalog",
    "match_cause",
]

CATALOG_FILE: Final = "failure_catalog.yaml"
UNKNOWN_CAUSE: Final = "unknown cause"
#: A matched line is quoted up to this many characters.
_QUOTE_CHARS: Final = 300


class Pattern(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    regex: str
    #: Engines / frontends this wording comes from; empty: any. Applied when the caller knows.
    engines: tuple[str, ...] = ()


class Evidence(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    patterns: tuple[Pattern, ...] = ()
    #: A cause does not match when any of these matches a line (e.g. the engine served already).
    unless: tuple[Pattern, ...] = ()
    exit_codes: tuple[int, ...] = ()
    #: Signals that killed the process (exit code -N).
    signals: tuple[int, ...] = ()
    #: Where the evidence shows (worker, frontend, service, benchmark): documentation.
    processes: tuple[str, ...] = ()


class Cause(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    id: str
    title: str
    fix: str
    evidence: Evidence


class Catalog(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    version: int
    causes: tuple[Cause, ...]


class CauseMatch(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What the catalog says about one failure: the cause (or ``unknown cause``), its fix, and
    the evidence that named it."""

    cause: str
    title: str = ""
    fix: str = ""
    #: The line that matched, or ``exit code N`` / ``signal N``; empty for an unknown cause.
    evidence: str = ""

    @property
    def known(self) -> bool:
        return self.cause != UNKNOWN_CAUSE


def decode_catalog(text: str) -> Catalog:
    """Decode (and check) catalog YAML text; a bad regex is a ValueError naming the cause."""
    catalog = msgspec.convert(yaml.safe_load(text), type=Catalog)
    seen: set[str] = set()
    for cause in catalog.causes:
        if cause.id in seen:
            raise ValueError(f"failure catalog: cause id {cause.id!r} appears twice")
        seen.add(cause.id)
        for pattern in (*cause.evidence.patterns, *cause.evidence.unless):
            try:
                re.compile(pattern.regex)
            except re.error as exc:
                raise ValueError(
                    f"failure catalog: {cause.id}: bad regex {pattern.regex!r}: {exc}"
                ) from exc
    return catalog


@functools.cache
def load_catalog() -> Catalog:
    """The packaged catalog (read once per process)."""
    text = resources.files("srt_runtime").joinpath(CATALOG_FILE).read_text(encoding="utf-8")
    return decode_catalog(text)


@functools.cache
def _compiled(regex: str) -> re.Pattern[str]:
    return re.compile(regex)


def _applies(pattern: Pattern, engine: str | None) -> bool:
    return engine is None or not pattern.engines or engine in pattern.engines


def _first_hit(patterns: Iterable[Pattern], lines: Sequence[str], engine: str | None) -> str | None:
    """The last line (the latest) that one of ``patterns`` matches, or None."""
    usable = [_compiled(p.regex) for p in patterns if _applies(p, engine)]
    for line in reversed(lines):
        if any(rx.search(line) for rx in usable):
            return line.strip()[:_QUOTE_CHARS]
    return None


def match_cause(
    catalog: Catalog,
    lines: Sequence[str],
    *,
    exit_code: int | None = None,
    engine: str | None = None,
) -> CauseMatch:
    """The cause ``lines`` (reason, fatal line, log tail: any order) and the exit code name."""
    for cause in catalog.causes:
        ev = cause.evidence
        if not ev.patterns:
            continue
        hit = _first_hit(ev.patterns, lines, engine)
        if hit is None or _first_hit(ev.unless, lines, engine) is not None:
            continue
        return CauseMatch(cause=cause.id, title=cause.title, fix=cause.fix, evidence=hit)
    if exit_code is not None:
        for cause in catalog.causes:
            ev = cause.evidence
            if exit_code < 0 and -exit_code in ev.signals:
                said = f"killed by signal {-exit_code}"
            elif exit_code >= 0 and exit_code in ev.exit_codes:
                said = f"exit code {exit_code}"
            else:
                continue
            return CauseMatch(cause=cause.id, title=cause.title, fix=cause.fix, evidence=said)
    return CauseMatch(cause=UNKNOWN_CAUSE)
