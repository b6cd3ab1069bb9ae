"""Rules for ``dynamo`` (docs/recipes.md#dynamo-rules)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from srt_schema.errors import Issue
from srt_schema.roles import dp_launch_mode_of, engine_struct, failover_of
from srt_schema.validate.context import Context

__all__ = ["MOVING_REFS", "RULES", "SHA_PATTERN"]

MOVING_REFS = ("main", "master", "HEAD")
SHA_PATTERN = re.compile(r"^[0-9a-f]{4,40}$")


def source(ctx: Context) -> Iterator[Issue]:
    dynamo = ctx.recipe.dynamo
    src = dynamo.source
    if src is None:
        return
    path = "$.dynamo.source"
    if dynamo.top_of_tree:
        yield ctx.issue(
            "$.dynamo.top_of_tree",
            "dynamo.top_of_tree cannot be combined with dynamo.source; pin a commit in "
            "source.rev or drop top_of_tree",
        )
    git = src.git is not None or src.rev is not None
    kinds = [k for k, on in (("git", git), ("pypi", src.pypi), ("wheel", src.wheel)) if on]
    if len(kinds) != 1:
        got = ", ".join(kinds) if kinds else "none"
        yield ctx.issue(
            path,
            f"dynamo.source needs exactly one of git (with rev), pypi, or wheel; got {got}",
        )
        return
    if git:
        if not src.rev:
            yield ctx.issue(
                f"{path}.rev", "a git source needs `rev:` (a tag, commit SHA or PR ref)"
            )
        elif src.rev in MOVING_REFS:
            yield ctx.issue(
                f"{path}.rev",
                "dynamo.source.rev must be an immutable ref (commit SHA, tag, or "
                f"refs/pull/<n>/head), not a moving branch name: '{src.rev}'",
            )
        if src.sha is not None and not SHA_PATTERN.match(src.sha):
            yield ctx.issue(
                f"{path}.sha", f"'{src.sha}' is not a commit SHA (4-40 lowercase hex digits)"
            )
        # Patch files, applied in order with `git apply` (docs/planner.md#dynamo-install).
        for index, patch in enumerate(src.patches or ()):
            if not patch.strip():
                yield ctx.issue(
                    f"{path}.patches[{index}]",
                    "must be a patch file path (absolute, or relative to the configs folder)",
                )
    else:
        for key, value in (("sha", src.sha), ("patches", src.patches)):
            if value is not None:
                yield ctx.issue(f"{path}.{key}", f"source.{key} only applies to a git source")
        value = src.pypi if src.pypi is not None else src.wheel
        if value is not None and not value.strip():
            yield ctx.issue(f"{path}.{kinds[0]}", "must be a non-empty string")
        elif src.wheel is not None and "://" in src.wheel:
            yield ctx.issue(
                f"{path}.wheel",
                f"{src.wheel!r} is a URL, but source.wheel is a nightly version or a path to a "
                "wheel file (absolute, or relative to the configs folder) and nothing is "
                "downloaded; download the wheel and give its path, or write its version",
            )


def sidecar_settings(ctx: Context) -> Iterator[Issue]:
    dynamo = ctx.recipe.dynamo
    # sidecar_port, sidecar_startup_timeout, sidecar_context_length: registry.FIELD_BOUNDS
    if dynamo.sidecar_binary is not None and not dynamo.sidecar_binary.strip():
        yield ctx.issue("$.dynamo.sidecar_binary", "must be a non-empty string")
    engine = engine_struct(ctx.recipe.engine)
    if dynamo.sidecar and dp_launch_mode_of(engine) not in (None, "per_node"):
        yield ctx.issue(
            "$.engine.dp_launch_mode", "the Dynamo sidecar mode with vLLM needs per_node"
        )


def failover(ctx: Context) -> Iterator[Issue]:
    engine = engine_struct(ctx.recipe.engine)
    if failover_of(engine) is None:
        return
    if ctx.recipe.frontend.type != "dynamo":
        yield ctx.issue("$.engine.failover", "engine.failover needs frontend.type: dynamo")
    if ctx.recipe.dynamo.sidecar:
        yield ctx.issue("$.engine.failover", "engine.failover cannot run with Dynamo sidecars")
    for name, role in ctx.recipe.roles.items():
        if "data-parallel-size" in role.args or "data_parallel_size" in role.args:
            yield ctx.issue(
                f"$.roles.{name}.args", "engine.failover does not support data-parallel-size"
            )
        load_format = role.args.get("load-format", role.args.get("load_format"))
        if load_format not in (None, "gms"):
            yield ctx.issue(
                f"$.roles.{name}.args",
                f"engine.failover needs load-format gms or unset; got '{load_format}'",
            )


RULES = (source, sidecar_settings, failover)
