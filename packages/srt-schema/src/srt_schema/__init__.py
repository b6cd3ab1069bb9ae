"""srt_schema: recipes and cluster configs, loaded into exact typed values or refused clearly.

    from srt_schema import load_recipe_text
    jobs = load_recipe_text(text, file="recipe.yaml")      # one LoadedJob per variant/sweep point
    recipe = jobs[0].recipe                                 # a frozen srt_schema.recipe.Recipe

Every problem is a RecipeError listing Issues (file, ``$.path``, message).

The names below are imported on first use (PEP 562): ``import srt_schema.errors`` (or
``.recipe``, ``.secrets``) then loads neither PyYAML nor the loading pipeline.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from srt_schema.cluster import ClusterConfig
    from srt_schema.clusterconfig import apply_cluster_defaults, parse_cluster_config
    from srt_schema.errors import (
        ClusterConfigError,
        Issue,
        MigrationError,
        RecipeError,
        SchemaError,
    )
    from srt_schema.load import (
        LoadedJob,
        dump_recipe,
        load_recipe_document,
        load_recipe_text,
        recipe_from,
    )
    from srt_schema.recipe import Recipe
    from srt_schema.setpaths import OverrideSyntaxError, PathOverride, parse_set, parse_unset

__version__ = "0.1.0"

#: public name -> the module that defines it (one table; ``__all__`` is built from it).
_EXPORTS: dict[str, str] = {
    "ClusterConfig": "srt_schema.cluster",
    "ClusterConfigError": "srt_schema.errors",
    "Issue": "srt_schema.errors",
    "LoadedJob": "srt_schema.load",
    "MigrationError": "srt_schema.errors",
    "OverrideSyntaxError": "srt_schema.setpaths",
    "PathOverride": "srt_schema.setpaths",
    "Recipe": "srt_schema.recipe",
    "RecipeError": "srt_schema.errors",
    "SchemaError": "srt_schema.errors",
    "apply_cluster_defaults": "srt_schema.clusterconfig",
    "dump_recipe": "srt_schema.load",
    "load_recipe_document": "srt_schema.load",
    "load_recipe_text": "srt_schema.load",
    "parse_cluster_config": "srt_schema.clusterconfig",
    "parse_set": "srt_schema.setpaths",
    "parse_unset": "srt_schema.setpaths",
    "recipe_from": "srt_schema.load",
}

__all__ = [
    "ClusterConfig",
    "ClusterConfigError",
    "Issue",
    "LoadedJob",
    "MigrationError",
    "OverrideSyntaxError",
    "PathOverride",
    "Recipe",
    "RecipeError",
    "SchemaError",
    "__version__",
    "apply_cluster_defaults",
    "dump_recipe",
    "load_recipe_document",
    "load_recipe_text",
    "parse_cluster_config",
    "parse_set",
    "parse_unset",
    "recipe_from",
]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'srt_schema' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
