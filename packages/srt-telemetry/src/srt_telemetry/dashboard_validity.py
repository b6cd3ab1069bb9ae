"""The dashboard's validity parts: the run's verdict line and each concurrency's verdict cell,
from the rollup's `validity` (written by `srt-bench validity`; codes and bounds in
docs/telemetry-and-bench.md#validity). Pure; escaped HTML."""

from __future__ import annotations

from html import escape

from srt_telemetry.rollup_view import ValidityView

__all__ = ["invalid_reason", "validity_cell", "validity_line"]


def invalid_reason(v: ValidityView | None) -> str:
    """The reason codes of an invalid window ("" when valid or not judged): the label of its
    hollow point on the charts."""
    if v is None or v.verdict != "invalid":
        return ""
    return ", ".join(dict.fromkeys(r.code for r in v.reasons)) or "invalid"


def validity_cell(v: ValidityView | None) -> str:
    """`valid`, `invalid: code, code` (the details in the cell's title), or `–` (not judged)."""
    if v is None or not v.verdict:
        return "<td>–</td>"
    if v.verdict == "valid":
        return '<td class="ok">valid</td>'
    codes = ", ".join(dict.fromkeys(r.code for r in v.reasons))
    title = "; ".join(r.detail for r in v.reasons)
    return f'<td class="warn" title="{escape(title)}">invalid: {escape(codes)}</td>'


def validity_line(v: ValidityView | None) -> str:
    """The run's verdict in one line, its reasons and the checks that could not run."""
    if v is None or not v.verdict:
        return (
            '<p id="validity">Not judged: the rollup has no validity verdict, so nothing says '
            "whether these numbers can be quoted.</p>"
        )
    unchecked_note = (
        f" {len(v.not_checked)} check(s) could not run; they are listed below."
        if v.not_checked
        else ""
    )
    if v.verdict == "valid":
        head = (
            '<p id="validity" class="verdict ok">Valid: no check found a problem with this run; '
            f"its numbers can be quoted.{unchecked_note}</p>"
        )
    else:
        n = len(v.reasons)
        head = (
            '<p id="validity" class="verdict warn">Invalid: '
            f"{n} problem{'s' if n != 1 else ''} found (below); do not quote these numbers "
            f"as they are.{unchecked_note}</p>"
        )
    items = "".join(
        f'<li class="warn"><code>{escape(r.code)}</code> {escape(r.detail)}</li>' for r in v.reasons
    )
    unchecked = "".join(
        f"<li><code>{escape(r.code)}</code> {escape(r.detail)}</li>" for r in v.not_checked
    )
    return (
        head
        + (f"<ul>{items}</ul>" if items else "")
        + (f"<p>not checked:</p><ul>{unchecked}</ul>" if unchecked else "")
    )
