"""Folders srtctl builds from recipe input stay inside their parent, and writing them fails cleanly.

``srtctl validate`` already refuses a recipe ``name`` that is not a safe file name
(``srt_schema.validate.names_rules``); this is the second line: every job folder and staging
folder is resolved and compared with the folder it must be in before anything is written, and
an ``OSError`` while writing (a read-only output folder, a file where a folder should be) is one
message with exit code 4, never a traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from srt_cli.errors import InvalidRecipeError, SlurmError

__all__ = ["check_inside", "writing"]


_NAME_FIX = "give the recipe a `name` of letters, digits, '.', '_' and '-'"


def check_inside(path: Path, folder: Path, *, what: str, fix: str = _NAME_FIX) -> Path:
    """``path``, refused unless it resolves to a place strictly inside ``folder``."""
    resolved, parent = path.resolve(), folder.resolve()
    if resolved == parent or not resolved.is_relative_to(parent):
        raise InvalidRecipeError(
            f"{what} {path} resolves to {resolved}, outside {parent}; nothing was written: {fix}"
        )
    return path


_OUTPUT_FIX = "choose a folder you can write with -o/--output (or output_dir in srtslurm.yaml)"


@contextmanager
def writing(folder: Path, *, what: str, fix: str = _OUTPUT_FIX) -> Iterator[None]:
    """Turn an ``OSError`` raised while writing ``folder`` into a SlurmError (exit 4)."""
    try:
        yield
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        where = f": {exc.filename}" if exc.filename else ""
        raise SlurmError(f"cannot write {what} {folder} ({reason}{where}); {fix}") from exc
