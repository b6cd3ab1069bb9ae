"""``output.log_dir``: where a job's logs go when the recipe says so (a FormattablePath).

The default (``./outputs/{job_id}/logs``) means "the job folder's ``logs/``", which is where
``srtctl -o DIR`` and ``srtslurm.yaml``'s ``output_dir`` put it. Any other value moves the logs:
``{job_id}`` and ``{run_name}`` (``<name>_<job_id>``) are filled in, ``$VAR`` / ``${VAR}`` and a
leading ``~`` are expanded from the given environment, and a relative path is taken from the
submitting directory. The job folder's ``logs`` then links to it, so every tool that reads
``<job>/logs`` keeps working. Pure: the environment and the directory are parameters.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping

from srt_planner.errors import PlanningError
from srt_schema.recipe import OutputConfig

__all__ = ["DEFAULT_LOG_DIR", "LOG_DIR_PLACEHOLDERS", "resolve_log_dir"]

#: The schema's default: the job folder's own ``logs/``.
DEFAULT_LOG_DIR = OutputConfig().log_dir
LOG_DIR_PLACEHOLDERS = ("job_id", "run_name")
_PLACEHOLDER = re.compile(r"(?<!\$)\{([^{}]*)\}")
_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def resolve_log_dir(
    template: str,
    *,
    job_id: str,
    run_name: str,
    environ: Mapping[str, str],
    cwd: str,
) -> str | None:
    """The absolute log directory ``template`` names, or None for the default."""
    if template == DEFAULT_LOG_DIR:
        return None
    values = {"job_id": job_id, "run_name": run_name}

    def fill(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise PlanningError(
                f"$.output.log_dir: unknown placeholder {{{key}}} in {template!r}; "
                f"available: {', '.join('{' + k + '}' for k in LOG_DIR_PLACEHOLDERS)}"
            )
        return values[key]

    def var(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        if name not in environ:
            raise PlanningError(
                f"$.output.log_dir: ${name} in {template!r} is not set in the environment"
            )
        return environ[name]

    text = _VAR.sub(var, _PLACEHOLDER.sub(fill, template))
    if text == "~" or text.startswith("~/"):
        text = environ.get("HOME", "~") + text[1:]
    return posixpath.normpath(posixpath.join(cwd, text))
