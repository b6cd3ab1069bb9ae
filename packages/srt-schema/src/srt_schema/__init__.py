"""srt_schema: recipes and cluster configs, loaded into exact typed values or refused clearly.

    from srt_schema import load_recipe_text
    jobs = load_recipe_text(text, file="recipe.yaml")      # one LoadedJob per variant/sweep point
    recipe = jobs[0].recipe                                 # a frozen srt_schema.recipe.Recipe

Every problem is a RecipeError listing Issues (file, ``$.path``, message).
"""

from __future__ import annotations

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
