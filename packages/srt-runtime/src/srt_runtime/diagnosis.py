"""The one-screen diagnosis of a failed run: what died first, where, why, and its log.

The block is at most :data:`MAX_LINES` lines of at most about :data:`LINE_CHARS` characters,
whatever the log holds: the header (what, node, exit code or fatal line, reason, log path),
then a few *decisive* lines of the log's tail, never the whole tail. A tail of at most
:data:`MAX_LOG_LINES` lines is shown as it is; from a longer one, in this order of preference:
the fatal line that stopped the run with the lines around it, the end of the last Python
traceback (its ``Traceback`` line, the innermost frame and the exception), the last lines the
process wrote, then the latest lines that read like errors (:data:`_DECISIVE`), without repeats;
when little stood out, the latest lines, up to six in all.
Skipped stretches are marked; terminal escapes and control characters are removed. The full log
is named by its path.

Each diagnosis also names the failure's *cause* and its fix from the failure catalog
(:mod:`srt_runtime.catalog`, data in ``failure_catalog.yaml``), or says ``unknown cause``.

The same facts are written as data to ``logs/diagnosis.json`` (:class:`DiagnosisRecord`,
:func:`write_diagnosis_record`) before post-processing, so the failed job's final status event
and its uploaded logs carry them (docs/telemetry-and-bench.md#status-api).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

import msgspec

from srt_runtime.catalog import CauseMatch, load_catalog, match_cause
from srt_runtime.files import write_atomic

__all__ = [
    "DIAGNOSIS_FILE",
    "LINE_CHARS",
    "MAX_LINES",
    "MAX_LOG_LINES",
    "TAIL_LINES",
    "DiagnosisRecord",
    "Failure",
    "build_diagnosis_record",
    "find_cause",
    "read_tail",
    "render_diagnosis",
    "write_diagnosis_record",
]

#: The diagnosis as data, in the log folder (written only for a failed run).
DIAGNOSIS_FILE: Final = "diagnosis.json"

_TAIL_BYTES = 64 * 1024
#: How many lines of a log's end the runtime reads to pick the decisive ones from.
TAIL_LINES: Final = 200
#: The whole block, header and frame included, is never longer than this.
MAX_LINES: Final = 40
#: At most this many lines of the log are shown.
MAX_LOG_LINES: Final = 12
#: A longer line (of the log, or a reason) is cut in its middle, keeping both ends.
LINE_CHARS: Final = 400
_HEAD_CHARS: Final = 280
_END_CHARS: Final = 100
#: Lines around the fatal line, and after it, shown with it.
_BEFORE_FATAL: Final = 2
_AFTER_FATAL: Final = 2
#: The last lines of the log are always shown.
_LAST: Final = 2
#: When fewer lines than this stood out, the latest lines fill up to it.
_FILL_TO: Final = 6

_TRACEBACK: Final = "Traceback (most recent call last):"
#: Lines that read like the cause of a failure (log levels, exceptions, crashes).
_DECISIVE: Final = re.compile(
    r"Traceback \(most recent call last\)"
    r"|^\s*[\w.]*(?:Error|Exception|Exit|Interrupt)\b"
    r"|\b(?:ERROR|FATAL|CRITICAL|PANIC)\b"
    r"|(?i:\b(?:error|fatal|panicked|segmentation fault|core dumped|out of memory|oom"
    r"|killed|aborted|assertion)\b)"
)
#: Terminal escapes (colours, cursor moves) and other control characters but tab.
_ESCAPES: Final = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-_]|[\x00-\x08\x0b-\x1f\x7f]")


class Failure(msgspec.Struct, frozen=True, kw_only=True):
    """The first thing that went wrong in a run (later failures are consequences)."""

    #: What failed: a process name, or a stage (``health gate``) when no process is to blame.
    what: str
    node: str | None = None
    exit_code: int | None = None
    log_line: str | None = None
    log_path: str | None = None
    reason: str
    #: Clock.monotonic() when a watcher thread saw the exit or the fatal line, if one did.
    seen_at: float | None = None
    #: Clock.monotonic() when the supervisor decided to abort.
    detected_at: float


class DiagnosisRecord(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """``logs/diagnosis.json`` and the ``diagnosis`` of the final status event: the header of
    :func:`render_diagnosis` as fields, and its log lines (``| text``, or ``... N lines not
    shown``) as they are printed."""

    what: str
    reason: str
    node: str | None = None
    exit_code: int | None = None
    log_line: str | None = None
    #: The failed process's log as the job saw it (an absolute path on the node).
    log_path: str | None = None
    #: The same log relative to the log folder (what S3 and the collector's uploads name it),
    #: when it is inside it.
    log_file: str | None = None
    #: The decisive lines of the log's tail, at most MAX_LOG_LINES plus the skip markers.
    log_excerpt: tuple[str, ...] = ()
    #: The failure catalog's cause id (``unknown cause`` when none matched), its title, fix and
    #: the evidence (the matched line, or ``exit code N``); absent in records written before.
    cause: str | None = None
    cause_title: str | None = None
    fix: str | None = None
    evidence: str | None = None


def read_tail(path: Path, lines: int) -> list[str]:
    """The last ``lines`` lines of a log (bounded read, invalid UTF-8 replaced)."""
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(0, size - _TAIL_BYTES))
            data = handle.read()
    except FileNotFoundError:
        return []
    text = data.decode("utf-8", errors="replace").splitlines()
    return text[-lines:] if lines > 0 else []


def _describe_code(code: int) -> str:
    return f"killed by signal {-code}" if code < 0 else f"exit code {code}"


def _clean(text: str) -> str:
    """One screen line: no escapes or control characters, a long line cut in its middle."""
    line = _ESCAPES.sub("", text.replace("\r\n", " ").replace("\n", " ").replace("\t", "    "))
    if len(line) <= LINE_CHARS:
        return line
    cut = len(line) - _HEAD_CHARS - _END_CHARS
    return f"{line[:_HEAD_CHARS]} [... {cut} characters ...] {line[-_END_CHARS:]}"


def _traceback_end(lines: list[str]) -> list[int]:
    """Indexes of the last traceback's header, innermost frame and exception line."""
    starts = [i for i, line in enumerate(lines) if line.strip() == _TRACEBACK]
    if not starts:
        return []
    start = starts[-1]
    end = start + 1
    # The block is its indented frames; the first line that is not indented is the exception.
    while end < len(lines) and (lines[end].startswith((" ", "\t")) or not lines[end].strip()):
        end += 1
    if end >= len(lines):
        return [start, *range(max(start + 1, len(lines) - 2), len(lines))]
    return [start, *range(max(start + 1, end - 2), end + 1)]


def _fatal_window(lines: list[str], fatal: str | None) -> list[int]:
    if not fatal:
        return []
    needle = _clean(fatal).strip()
    hits = [i for i, line in enumerate(lines) if needle and needle in line]
    if not hits:
        return []
    at = hits[-1]
    return list(range(max(0, at - _BEFORE_FATAL), min(len(lines), at + _AFTER_FATAL + 1)))


def _pick_decisive(tail: list[str], fatal_line: str | None = None) -> list[int]:
    """Indexes (ascending) of the at most MAX_LOG_LINES lines of ``tail`` worth showing."""
    lines = [_clean(line) for line in tail]
    if len(lines) <= MAX_LOG_LINES:
        return list(range(len(lines)))
    chosen: list[int] = []
    texts: set[str] = set()

    def take(
        indexes: list[int] | range, *, unique: bool = False, limit: int = MAX_LOG_LINES
    ) -> None:
        for i in indexes:
            if len(chosen) >= limit:
                return
            if i in chosen or (unique and (lines[i].strip() in texts or not lines[i].strip())):
                continue
            chosen.append(i)
            texts.add(lines[i].strip())

    take(_fatal_window(lines, fatal_line))
    take(_traceback_end(lines))
    take(range(len(lines) - 1, max(-1, len(lines) - 1 - _LAST), -1))
    decisive = [i for i in range(len(lines) - 1, -1, -1) if _DECISIVE.search(lines[i])]
    take(decisive, unique=True)
    # When little stood out, the latest lines say what the process was doing.
    take(range(len(lines) - 1, -1, -1), unique=True, limit=_FILL_TO)
    return sorted(chosen)


def _log_block(tail: list[str], fatal_line: str | None) -> list[str]:
    if not tail:
        return []
    picked = _pick_decisive(tail, fatal_line)
    if len(picked) == len(tail):
        out = [f"  last {len(tail)} lines of the log:"]
    else:
        out = [f"  decisive lines of the log ({len(picked)} of its last {len(tail)}):"]
    previous = -1
    for i in picked:
        if i > previous + 1:
            skipped = i - previous - 1
            out.append(f"    ... {skipped} line{'s' if skipped > 1 else ''} not shown")
        out.append(f"    | {_clean(tail[i])}")
        previous = i
    return out


def find_cause(failure: Failure, tail: list[str]) -> CauseMatch:
    """The failure catalog's cause of ``failure``, from its reason, fatal line, log tail and exit
    code (pure but for reading the packaged catalog once)."""
    lines = [failure.reason, *([failure.log_line] if failure.log_line else []), *tail]
    return match_cause(load_catalog(), lines, exit_code=failure.exit_code)


def _cause_lines(cause: CauseMatch | None) -> list[str]:
    if cause is None:
        return []
    if not cause.known:
        return ["  cause:  unknown cause (no failure catalog entry matched; read the log lines)"]
    return [
        f"  cause:  {cause.cause}: {_clean(cause.title)}",
        f"  fix:    {_clean(cause.fix)}",
    ]


def render_diagnosis(failure: Failure, tail: list[str], cause: CauseMatch | None = None) -> str:
    """The failure block printed at the end of the sweep log and of the CLI's output: at most
    :data:`MAX_LINES` lines, whatever ``tail`` (the end of the failed process's log) holds; with
    ``cause``, the catalog's cause and fix after the reason."""
    out = ["=" * 72, "RUN FAILED", f"  what:   {_clean(failure.what)}"]
    if failure.node is not None:
        out.append(f"  node:   {_clean(failure.node)}")
    if failure.exit_code is not None:
        out.append(f"  exit:   {_describe_code(failure.exit_code)}")
    if failure.log_line is not None:
        out.append(f"  line:   {_clean(failure.log_line)}")
    out.append(f"  reason: {_clean(failure.reason)}")
    out.extend(_cause_lines(cause))
    if failure.log_path is not None:
        out.append(f"  log:    {failure.log_path}")
    out.extend(_log_block(tail, failure.log_line))
    out.append("=" * 72)
    return "\n".join(out)


def _relative(log_path: str | None, log_dir: Path) -> str | None:
    if log_path is None:
        return None
    try:
        return Path(log_path).relative_to(log_dir).as_posix()
    except ValueError:
        return None


def build_diagnosis_record(
    failure: Failure, tail: list[str], log_dir: Path, cause: CauseMatch | None = None
) -> DiagnosisRecord:
    """The diagnosis of ``failure`` as data (pure): the cleaned header fields, the same log
    lines :func:`render_diagnosis` shows, and the catalog's ``cause``."""
    excerpt = tuple(line.removeprefix("    ") for line in _log_block(tail, failure.log_line)[1:])
    return DiagnosisRecord(
        what=_clean(failure.what),
        reason=_clean(failure.reason),
        node=None if failure.node is None else _clean(failure.node),
        exit_code=failure.exit_code,
        log_line=None if failure.log_line is None else _clean(failure.log_line),
        log_path=failure.log_path,
        log_file=_relative(failure.log_path, log_dir),
        log_excerpt=excerpt,
        cause=cause.cause if cause is not None else None,
        cause_title=cause.title or None if cause is not None else None,
        fix=cause.fix or None if cause is not None else None,
        evidence=cause.evidence or None if cause is not None else None,
    )


def write_diagnosis_record(
    log_dir: Path, failure: Failure, tail: list[str], cause: CauseMatch | None = None
) -> Path:
    """Write ``<log_dir>/diagnosis.json`` (atomically) and return its path."""
    path = log_dir / DIAGNOSIS_FILE
    record = build_diagnosis_record(failure, tail, log_dir, cause)
    write_atomic(path, msgspec.json.format(msgspec.json.encode(record)) + b"\n")
    return path
