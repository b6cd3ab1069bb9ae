"""Load one source into its jobs (override variants x sweep points), errors translated.

A local ``model.path`` written relative to where srtctl runs (``./models/x``, ``~/m``,
``$MODELS/x``) is made absolute here, at the edge, so the plan, the job's config and every
process agree on one folder whatever their working directory.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from srt_cli.errors import translated
from srt_cli.inputs import Source

if TYPE_CHECKING:
    from srt_schema.cluster import ClusterConfig
    from srt_schema.load import LoadedJob
    from srt_schema.setpaths import PathOverride

__all__ = ["absolute_model_path", "load_jobs"]


def absolute_model_path(path: str, *, cwd: Path, environ: Mapping[str, str]) -> str:
    """``path`` made absolute when it names a local folder; aliases and ``hf:`` ids unchanged."""
    if path.startswith("hf:") or not ("/" in path or path.startswith(("~", "$"))):
        return path
    from srt_schema.formatting import expand_vars

    expanded = expand_vars(path, environ)
    if expanded == "~" or expanded.startswith("~/"):
        expanded = environ.get("HOME", str(Path.home())) + expanded[1:]
    return os.path.normpath(cwd / expanded)


def load_jobs(
    source: Source,
    *,
    cluster: ClusterConfig | None,
    overrides: Sequence[PathOverride] = (),
    force_sweep: bool = False,
    tokenizer: str | None = None,
) -> tuple[LoadedJob, ...]:
    """Every job of ``source``; a recipe that does not load raises InvalidRecipeError (exit 2).
    ``tokenizer``: see :func:`srt_schema.load.load_recipe_document`."""
    import msgspec

    from srt_schema.load import load_recipe_text

    if source.unreadable is not None:
        raise source.unreadable
    with translated():
        jobs = load_recipe_text(
            source.text,
            file=source.label,
            cluster=cluster,
            selector=source.selector,
            overrides=overrides,
            force_sweep=force_sweep,
            tokenizer=tokenizer,
        )
    out = []
    for loaded in jobs:
        model = loaded.recipe.model
        path = absolute_model_path(model.path, cwd=Path.cwd(), environ=os.environ)
        if path == model.path:
            out.append(loaded)
            continue
        recipe = msgspec.structs.replace(
            loaded.recipe, model=msgspec.structs.replace(model, path=path)
        )
        document = {**loaded.document, "model": {**loaded.document["model"], "path": path}}
        out.append(msgspec.structs.replace(loaded, recipe=recipe, document=document))
    return tuple(out)
