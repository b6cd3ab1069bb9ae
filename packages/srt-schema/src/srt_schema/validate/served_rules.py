"""One served model name per deployment (``srt_schema.served``): roles may not disagree."""

from __future__ import annotations

from collections.abc import Iterator

from srt_schema.errors import Issue
from srt_schema.served import served_names_by_role
from srt_schema.validate.context import Context

__all__ = ["RULES"]


def one_served_name(ctx: Context) -> Iterator[Issue]:
    named = served_names_by_role(ctx.recipe)
    if len({n.name for n in named.values()}) <= 1:
        return
    (first_role, first), *rest = named.items()
    for role, other in rest:
        if other.name != first.name:
            yield ctx.issue(
                other.path,
                f"{role} serves '{other.name}' but {first_role} serves '{first.name}' "
                f"({first.path}); a deployment serves one model name that every worker "
                "registers and every client asks for: give every role the same name, or name "
                "it on one role only",
            )


RULES = (one_served_name,)
