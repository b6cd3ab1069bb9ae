"""The one-screen diagnosis of a failed run: what died first, where, why, and its log."""

from __future__ import annotations

from pathlib import Path

import msgspec

__all__ = ["Failure", "read_tail", "render_diagnosis"]

_TAIL_BYTES = 64 * 1024


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


def render_diagnosis(failure: Failure, tail: list[str]) -> str:
    """The failure block printed at the end of the sweep log and of the CLI's output."""
    out = ["=" * 72, "RUN FAILED", f"  what:   {failure.what}"]
    if failure.node is not None:
        out.append(f"  node:   {failure.node}")
    if failure.exit_code is not None:
        out.append(f"  exit:   {_describe_code(failure.exit_code)}")
    if failure.log_line is not None:
        out.append(f"  line:   {failure.log_line}")
    out.append(f"  reason: {failure.reason}")
    if failure.log_path is not None:
        out.append(f"  log:    {failure.log_path}")
    if tail:
        out.append(f"  last {len(tail)} lines of the log:")
        out.extend(f"    | {line}" for line in tail)
    out.append("=" * 72)
    return "\n".join(out)
