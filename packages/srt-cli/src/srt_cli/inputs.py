"""``-f`` arguments: a file, a directory, ``-`` (stdin), each optionally ``:selector``.

A directory yields every ``*.yaml`` / ``*.yml`` below it (recursively, sorted). A selector picks
override variants (``recipe.yaml:override_tp8``, ``recipe.yaml:*mtp*``) and is only valid on a file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import IO

from srt_cli.errors import CliError, CliUsageError, translated

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
    #: Why a file found in a folder could not be read; it is reported as that file's failure
    #: when its turn comes, and the folder's other files still run.
    unreadable: CliError | None = None


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:  # a name longer than the file system allows, ...
        return False


def _is_dir(path: Path) -> bool:
    return _exists(path) and path.is_dir()


def _is_file(path: Path) -> bool:
    return _exists(path) and path.is_file()


def _kind(path: Path) -> str | None:
    """What ``path`` is when it is not a regular file or folder (``a FIFO``), else None."""
    import stat

    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return None


def _document_limit() -> int:
    from srt_schema.yamlio import YAML_LIMITS

    return YAML_LIMITS["document_size"].maximum


def _read_bounded(stream: IO[bytes], label: str) -> bytes:
    """At most the document limit of bytes from ``stream``; more is a usage error (a file, a
    FIFO, a device and stdin are held to the same bound, and nothing past it is read)."""
    limit = _document_limit()
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise CliUsageError(
            f"{label}: more than {limit} bytes (limit document_size = {limit}); a recipe is a "
            "few kB: check that the right file was named"
        )
    return data


def split_spec(spec: str) -> tuple[str, str | None]:
    """``file:selector`` -> (file, selector); a path that exists as given is never split."""
    if not spec:
        raise CliUsageError("-f '': empty path; name a recipe file, a folder or - for stdin")
    if spec == STDIN or _exists(Path(spec)) or ":" not in spec:
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
    if _is_dir(path):
        if selector is not None:
            raise CliUsageError(f"-f {spec!r}: a selector needs a file, not a directory")
        found = {*path.rglob("*.yaml"), *path.rglob("*.yml")}
        files = sorted(f for f in found if f.is_file())
        if not files:
            raise CliUsageError(f"-f {target}: no *.yaml or *.yml files in this directory")
        return [(f, None) for f in files]
    if _kind(path) in ("a FIFO", "a character device"):
        return [(path, selector)]  # read like a file, to the same bound (`-f <(cat x.yaml)`)
    if _kind(path) is not None:
        raise CliUsageError(
            f"-f {target}: is {_kind(path)}, not a recipe file; name a YAML file or use - for stdin"
        )
    if not _is_file(path):
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
        with path.open("rb") as stream:
            data = _read_bounded(stream, f"-f {path}")
    except OSError as exc:
        raise CliUsageError(f"-f {path}: cannot read: {exc.strerror or exc}") from exc
    return _decode(data, str(path))


def read_stdin(stdin: IO[str]) -> str:
    """The text on stdin, held to the same size bound and UTF-8 rule as a file."""
    binary = getattr(stdin, "buffer", None)
    if binary is not None:
        return _decode(_read_bounded(binary, "<stdin>"), "<stdin>")
    limit = _document_limit()
    try:
        text = stdin.read(limit + 1)
        if len(text) > limit:
            raise CliUsageError(
                f"<stdin>: more than {limit} characters (limit document_size = {limit}); a "
                "recipe is a few kB: check what is piped in"
            )
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
        named = Path(split_spec(spec)[0])
        for path, selector in expand_spec(spec):
            if path is None:
                out.append(Source(label="<stdin>", text=read_stdin(stdin), selector=selector))
                continue
            try:
                text = read_file(path)
            except CliError as exc:
                if path == named:
                    raise  # the file named on the command line: the command cannot run
                out.append(Source(label=str(path), text="", path=path, unreadable=exc))
                continue
            out.append(Source(label=str(path), text=text, selector=selector, path=path))
    return out
