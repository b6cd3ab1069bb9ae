"""Credentials written into free text are refused (docs/recipes.md#credentials-in-text).

srt writes every value of a recipe or ``srtslurm.yaml`` into files (``config.yaml``,
``plan.json``, the lockfile, logs) through the one redactor (:mod:`srt_schema.secrets`), which
replaces a URL's password and a value assigned to a credential's name (``export HF_TOKEN=...``,
``--api-key=...``) by ``<redacted>``. Such a value in free text (a preamble, a command, an
argument) would therefore reach the job as ``<redacted>``, or leak where the text is not a
document field. It is refused at load with what to do instead: keep the secret in an
environment variable and refer to it (``$HF_TOKEN``).

Where a credential is carried properly, it is not checked: environment mappings (``environment``,
``env``, ``*_environment``: the job gets them in its process environment), the secret fields of
:data:`~srt_schema.secrets.SECRET_FIELDS`, and sbatch directives (sbatch reads the real script on
its stdin). A status endpoint with ``user:password@`` has its own refusal
(:mod:`srt_schema.text_bounds`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from srt_schema.errors import Issue
from srt_schema.secrets import SECRET_FIELDS, redact_text
from srt_schema.structural import join_path

__all__ = ["credential_issues"]

#: Mappings whose values travel as environment variables or are handled on their own.
_CARRIERS = frozenset({"environment", "env", "sbatch_directives", "default_sbatch_directives"})
_STATUS = ("reporting", "status")


def _carrier(key: str, path: tuple[str, ...]) -> bool:
    if key in _CARRIERS or key.endswith("_environment"):
        return True
    here = (*path, key)
    return here in SECRET_FIELDS or (here[-3:-1] == _STATUS and key in ("endpoint", "endpoints"))


def _walk(node: Any, path: tuple[str, ...], where: str) -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if not isinstance(key, str) or _carrier(key, path):
                continue
            yield from _walk(value, (*path, key), join_path(where, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _walk(value, path, join_path(where, i))
    elif isinstance(node, str):
        shown = redact_text(node)
        if shown != node:
            yield where, shown


def credential_issues(doc: Any, *, file: str, base: tuple[str, ...] = ()) -> list[Issue]:
    """An issue for every text of ``doc`` that holds a credential (shown redacted)."""
    out = []
    for where, shown in _walk(doc, base, "$"):
        clipped = shown if len(shown) <= 120 else shown[:117] + "..."
        out.append(
            Issue(
                file=file,
                path=where,
                message=(
                    f"{clipped!r} holds a credential (shown <redacted>): every file srt writes "
                    "holds it redacted, so the job would get <redacted>; keep the secret in an "
                    "environment variable (the shell that runs srtctl, or `environment`) and "
                    "write $NAME here instead"
                ),
            )
        )
    return out
