"""FormattablePath: ``{placeholder}`` templates, ``$VARS`` and ``~``
(docs/recipes.md#paths-and-templates).

``output.log_dir`` and both sides of every ``container_mounts`` entry are templates, formatted
when the job's values are known. Pure: the environment, home and working folder are parameters.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping

from srt_schema.errors import SchemaError

__all__ = [
    "PATH_PLACEHOLDERS",
    "FormatError",
    "expand_vars",
    "format_path",
    "unknown_placeholders",
]

#: Placeholders every FormattablePath may use.
PATH_PLACEHOLDERS: tuple[str, ...] = (
    "job_id",
    "run_name",
    "head_node_ip",
    "log_dir",
    "model_path",
    "container_image",
    "gpus_per_node",
)

_VAR = re.compile(r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)\}|(?P<plain>[A-Za-z_][A-Za-z0-9_]*))")


class FormatError(SchemaError):
    """A template names a placeholder that has no value."""


# ``{name}`` is a placeholder; ``${NAME}`` is an environment variable, not a placeholder.
_PLACEHOLDER = re.compile(r"(?<!\$)\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _fields(template: str) -> list[str]:
    return _PLACEHOLDER.findall(template)


def unknown_placeholders(template: str, allowed: tuple[str, ...] = PATH_PLACEHOLDERS) -> list[str]:
    """Placeholders in ``template`` that are not ``allowed`` (empty when the template is fine)."""
    return [name for name in _fields(template) if name not in allowed]


def expand_vars(text: str, environ: Mapping[str, str]) -> str:
    """``$VAR`` and ``${VAR}`` from ``environ``; unknown variables are left as written."""

    def sub(match: re.Match[str]) -> str:
        name = match.group("braced") or match.group("plain")
        return environ.get(name, match.group(0))

    return _VAR.sub(sub, text)


def format_path(
    template: str,
    values: Mapping[str, str],
    *,
    environ: Mapping[str, str],
    home: str,
    cwd: str | None = None,
) -> str:
    """Format ``template`` with ``values``, then expand ``$VARS`` and ``~``.

    With ``cwd`` the result is made absolute (host paths); without it (container paths) a
    relative result stays relative.
    """
    missing = [name for name in _fields(template) if name not in values]
    if missing:
        raise FormatError(
            f"missing placeholder {missing[0]!r} in template {template!r}; available "
            f"placeholders: {', '.join(sorted(values))}"
        )
    text = _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)
    text = expand_vars(text, environ)
    if text == "~" or text.startswith("~/"):
        text = home + text[1:]
    if cwd is not None and not posixpath.isabs(text):
        text = posixpath.normpath(posixpath.join(cwd, text))
    return text
