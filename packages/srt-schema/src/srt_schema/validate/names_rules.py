"""Recipe values that become part of a file or folder name: a safe character set, bounded.

``name`` names the job's staging folder and its Slurm job; ``services[].name`` names the
service's log file (``service_<name>.out``); every ``storage_subdir`` is a folder below the log
directory. Each is checked here so that no recipe value can reach outside the folder srt
builds from it (``name: "../x"`` is refused). Role names are fixed by the schema and
``output.log_dir`` is a path on purpose (its placeholders are checked with the output rules).

The check runs on the typed recipe (a rule) and, when the document does not type, on the raw
document (:func:`raw_name_issues`), so a type error elsewhere does not hide an unsafe name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from srt_schema.errors import Issue, show_value
from srt_schema.validate.context import Context, Rule

__all__ = ["MAX_NAME_CHARS", "RULES", "name_problem", "raw_name_issues", "subdir_problem"]

#: The longest name accepted (file systems allow 255 bytes per name; srt adds suffixes).
MAX_NAME_CHARS = 128
_SAFE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")
_ALLOWED = (
    "use letters, digits, '.', '_' and '-' (not starting with '.' or '-'), "
    f"at most {MAX_NAME_CHARS} characters"
)

#: Raw-document paths of every name-like value: (path, what it names).
_NAMES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("name",), "the job's folder and Slurm job name"),
)
#: Raw-document paths of every sub-folder value (``a/b`` allowed, each part a safe name).
_SUBDIRS: tuple[tuple[str, ...], ...] = (
    ("observability", "tachometer", "storage_subdir"),
    ("telemetry", "storage_subdir"),
    ("telemetry", "cpu_power", "storage_subdir"),
)
_SERVICE = "the service's log file (service_<name>.out)"


def name_problem(value: str) -> str | None:
    """Why ``value`` cannot be part of a file name, or None when it can."""
    if len(value) > MAX_NAME_CHARS:
        return f"is {len(value)} characters long"
    if not _SAFE.fullmatch(value):
        return "has characters that are not safe in a file name"
    return None


def subdir_problem(value: str) -> str | None:
    """Why ``value`` is not a safe relative folder (``a`` or ``a/b``), or None.

    Empty, absolute and ``..`` values are reported by the observability rules; this adds the
    character set of each part.
    """
    parts = value.split("/")
    if not value or value.startswith(("/", "~")) or any(p in ("", "..") for p in parts):
        return None
    for part in parts:
        problem = name_problem(part)
        if problem is not None:
            return f"part {show_value(part)} {problem}"
    return None


def _name_issue(file: str, path: str, value: str, problem: str, names: str) -> Issue:
    return Issue(
        file=file,
        path=path,
        message=f"{show_value(value)} {problem}; it becomes part of {names}: {_ALLOWED}",
    )


def _subdir_issue(file: str, path: str, value: str, problem: str) -> Issue:
    return Issue(
        file=file,
        path=path,
        message=(
            f"{show_value(value)}: {problem}; it becomes a folder below the log directory: "
            f"in each part {_ALLOWED}"
        ),
    )


def _issues(
    file: str,
    names: Iterable[tuple[str, str, str]],
    subdirs: Iterable[tuple[str, str]],
) -> Iterator[Issue]:
    for path, value, what in names:
        problem = name_problem(value)
        if problem is not None:
            yield _name_issue(file, path, value, problem, what)
    for path, value in subdirs:
        problem = subdir_problem(value)
        if problem is not None:
            yield _subdir_issue(file, path, value, problem)


def _dotted(parts: tuple[str, ...]) -> str:
    return "$." + ".".join(parts)


def safe_names(ctx: Context) -> Iterator[Issue]:
    recipe = ctx.recipe
    names = [("$.name", recipe.name, _NAMES[0][1])]
    names.extend(
        (f"$.services[{i}].name", svc.name, _SERVICE) for i, svc in enumerate(recipe.services)
    )
    tach = recipe.observability.tachometer
    telemetry = recipe.telemetry
    values = (tach.storage_subdir, telemetry.storage_subdir, telemetry.cpu_power.storage_subdir)
    subdirs = [(_dotted(path), value) for path, value in zip(_SUBDIRS, values, strict=True)]
    yield from _issues(ctx.file, names, subdirs)


def _raw_at(doc: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(part)
    return doc


def raw_name_issues(doc: dict[str, Any], *, file: str) -> list[Issue]:
    """The same checks on a document that does not type (only values that are strings)."""
    names = [
        (_dotted(path), value, what)
        for path, what in _NAMES
        if isinstance(value := _raw_at(doc, path), str)
    ]
    services = doc.get("services")
    if isinstance(services, list):
        for i, svc in enumerate(services):
            value = svc.get("name") if isinstance(svc, dict) else None
            if isinstance(value, str):
                names.append((f"$.services[{i}].name", value, _SERVICE))
    subdirs = [
        (_dotted(path), value) for path in _SUBDIRS if isinstance(value := _raw_at(doc, path), str)
    ]
    return list(_issues(file, names, subdirs))


RULES: tuple[Rule, ...] = (safe_names,)
