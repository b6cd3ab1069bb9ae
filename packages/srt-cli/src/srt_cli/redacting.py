"""Every line srtctl prints goes through the one redactor (``srt_schema.secrets.redact_text``).

:func:`install` wraps ``sys.stdout`` and ``sys.stderr`` once, in ``main``: a URL password, a value
assigned to a credential's name, and every secret value of srtctl's environment (the variables
``secret_environment`` picks: ``HF_TOKEN``, ``AWS_SECRET_ACCESS_KEY``, a URL with a password)
are printed as ``<redacted>``, whichever command, warning, error or child output printed them.
"""

from __future__ import annotations

import os
import sys
from typing import Any, TextIO

__all__ = ["RedactingStream", "install"]


class RedactingStream:
    """A text stream that writes ``redact_text(s)`` for every ``write(s)``."""

    def __init__(self, inner: TextIO, secrets: frozenset[str] | None = None) -> None:
        self._inner = inner
        self._secrets = secrets

    def _known(self) -> frozenset[str]:
        if self._secrets is None:
            from srt_schema.secrets import secret_environment

            self._secrets = frozenset(secret_environment(dict(os.environ)).values())
        return self._secrets

    def write(self, text: str) -> int:
        from srt_schema.secrets import redact_text

        self._inner.write(redact_text(text, self._known()))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def install() -> None:
    """Wrap stdout and stderr (once)."""
    if not isinstance(sys.stdout, RedactingStream):
        sys.stdout = RedactingStream(sys.stdout)
    if not isinstance(sys.stderr, RedactingStream):
        sys.stderr = RedactingStream(sys.stderr)
