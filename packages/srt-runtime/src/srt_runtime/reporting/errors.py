"""The exception family of ``srt_runtime.reporting``.

Reporting never changes a job's outcome: the public ``run_``/``upload_``/``send`` entry points
return a result that names the failure instead of raising. These exceptions are raised only for
bad *input* handed to the pure builders (a ``reporting.s3`` block with no bucket, a token
variable name that is not a name...), which callers should surface at load or dry-run time.
"""

from __future__ import annotations

__all__ = ["ReportingConfigError", "ReportingError"]


class ReportingError(Exception):
    """Base class of every error raised by ``srt_runtime.reporting``."""


class ReportingConfigError(ReportingError):
    """A ``reporting`` block cannot be used as written (the message names the field and fix)."""
