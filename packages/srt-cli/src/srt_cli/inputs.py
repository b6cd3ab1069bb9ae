"""``-f`` arguments: a file, a directory, ``-`` (stdin), each optionally ``:selector``.

A directory yields every ``*.yaml`` / ``*.yml`` below it (recursively, sorted). A selector picks
override variants (``recipe.yaml:override_tp8``, ``recipe.yaml:*mtp*``) and is only valid on a file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import IO

from srt_cli.errors import CliUsageError, translated

__all__ = ["Source", "expand_spec", "read_file", "read_sources", "read_stdin", "split_spec"]

STDIN = "-"


@dataclass(frozen=True)
class Source:
    """One recipe file to process."""

    #: How messages name it (the path as given, or ``<stdin>``).
    label: str
    text: str
    selector: str | None = None
    #: The file on disk (None for stdin).
    path: Path | None = None


def split_spec(spec: str) -> tuple[str, str | None]:
    """``file:selector`` -> (file, selector); a path that exists as given is never split."""
    if spec == STDIN or Path(spec).exists() or ":" not in spec:
        return spec, None
    head, _, selector = spec.rpartition(":")
    if not selector:
        raise CliUsageError(
            f"-f {spec!r}: empty selector after ':'; drop the ':' or name a variant"
        )
    return head, selector


def expand_spec(spec: str) -> list[tuple[Path | None, str | None]]:
    """The files one ``-f`` names (None stands for stdin), each with its selector."""
    target, selector = split_spec(spec)
    if target == STDIN:
        return [(None, selector)]
    path = Path(target)
    if path.is_dir():
        if selector is not None:
            raise CliUsageError(f"-f {spec!r}: a selector needs a file, not a directory")
        files = sorted({*path.rglob("*.yaml"), *path.rglob("*.yml")})
        if not files:
            raise CliUsageError(f"-f {target}: no *.yaml or *.yml files in this directory")
        return [(f, None) for f in files]
    if not path.is_file():
        raise CliUsageError(f"-f {target}: no such file or directory")
    return [(path, selector)]


def _decode(data: bytes, label: str) -> str:
    """UTF-8 text (a BOM dropped), or InvalidRecipeError naming the first bad byte (exit 2)."""
    from srt_schema.yamlio import decode_yaml_bytes

    with translated():
        return decode_yaml_bytes(data, file=label)


def read_file(path: Path) -> str:
    """The text of a recipe file; unreadable or not UTF-8 is a usage error (exit 2)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CliUsageError(f"-f {path}: cannot read: {exc.strerror or exc}") from exc
    return _decode(data, str(path))


def read_stdin(stdin: IO[str]) -> str:
    """The text on stdin, held to the same UTF-8 rule as a file."""
    try:
        text = stdin.read()
    except UnicodeDecodeError as exc:
        raise CliUsageError(
            f"<stdin>: not UTF-8 text: byte 0x{exc.object[exc.start : exc.start + 1].hex()} at "
            f"offset {exc.start}; send UTF-8"
        ) from exc
    # A C/POSIX locale decodes stdin with surrogateescape: this gives the bytes back.
    return _decode(text.encode("utf-8", "surrogateescape"), "<stdin>")


def read_sources(specs: tuple[str, ...], stdin: IO[str]) -> list[Source]:
    """Every file named by ``specs``, read; stdin may be given once."""
    out: list[Source] = []
    for spec in specs:
        for path, selector in expand_spec(spec):
            if path is None:
                out.append(Source(label="<stdin>", text=read_stdin(stdin), selector=selector))
            else:
                out.append(
                    Source(label=str(path), text=read_file(path), selector=selector, path=path)
                )
    return out
