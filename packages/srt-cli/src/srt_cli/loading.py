"""Load one source into its jobs (override variants x sweep points), errors translated."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from srt_cli.errors import translated
from srt_cli.inputs import Source

if TYPE_CHECKING:
    from srt_schema.cluster import ClusterConfig
    from srt_schema.load import LoadedJob
    from srt_schema.setpaths import PathOverride

__all__ = ["load_jobs"]


def load_jobs(
    source: Source,
    *,
    cluster: ClusterConfig | None,
    overrides: Sequence[PathOverride] = (),
    force_sweep: bool = False,
) -> tuple[LoadedJob, ...]:
    """Every job of ``source``; a recipe that does not load raises InvalidRecipeError (exit 2)."""
    from srt_schema.load import load_recipe_text

    with translated():
        return load_recipe_text(
            source.text,
            file=source.label,
            cluster=cluster,
            selector=source.selector,
            overrides=overrides,
            force_sweep=force_sweep,
        )
