"""The cross-field validation catalogue (docs/recipes.md#validation-catalogue), checked in order.

Every rule sees the whole recipe and yields Issues; all of them are collected, so a user sees
every problem of a file in one run.
"""

from __future__ import annotations

from typing import Any

from srt_schema.errors import Issue
from srt_schema.recipe import Recipe
from srt_schema.validate import (
    benchmark_rules,
    capacity_rules,
    dynamo_rules,
    engine_args_rules,
    frontend_rules,
    names_rules,
    observe_rules,
    roles_rules,
    served_rules,
    services_rules,
    unsupported_rules,
)
from srt_schema.validate.context import Context, Rule

__all__ = ["RULES", "validate_recipe"]

RULES: tuple[Rule, ...] = (
    *roles_rules.RULES,
    *engine_args_rules.RULES,
    *frontend_rules.RULES,
    *served_rules.RULES,
    *dynamo_rules.RULES,
    *observe_rules.RULES,
    *services_rules.RULES,
    *benchmark_rules.RULES,
    *capacity_rules.RULES,
    *unsupported_rules.RULES,
    *names_rules.RULES,
)


def validate_recipe(recipe: Recipe, raw: dict[str, Any], *, file: str) -> list[Issue]:
    """Every cross-field issue of a structurally valid recipe (empty when it is valid)."""
    ctx = Context(recipe=recipe, raw=raw, file=file)
    issues: list[Issue] = []
    for rule in RULES:
        issues.extend(rule(ctx))
    return issues
