"""The recipe loading pipeline (cli-and-config.md §3.1), every step a pure function.

text ─parse_yaml─▶ raw ─--set/--unset─▶ override variants ─schema gate─▶ cluster defaults
     ─sweep expansion─▶ engine normalisation ─structural check─▶ msgspec Recipe ─cross-field rules─▶

Every issue of every variant and sweep point is collected and raised together as one
RecipeError; nothing is printed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from srt_schema.cluster import ClusterConfig
from srt_schema.clusterconfig import apply_cluster_defaults
from srt_schema.errors import Issue, RecipeError
from srt_schema.gate import check_schema_version
from srt_schema.normalize import normalize_engines
from srt_schema.overrides import expand_variants, is_override_file
from srt_schema.recipe import Recipe
from srt_schema.schemas import load_schema
from srt_schema.setpaths import PathOverride, apply_overrides
from srt_schema.structural import check_document
from srt_schema.sweep import expand_sweep
from srt_schema.validate import validate_recipe
from srt_schema.yamlio import parse_yaml

__all__ = ["LoadedJob", "dump_recipe", "load_recipe_document", "load_recipe_text", "recipe_from"]


class LoadedJob(msgspec.Struct, frozen=True, kw_only=True):
    """One job a recipe file yields (one per override variant and sweep point)."""

    #: The job's name (the recipe ``name`` after variant and sweep naming).
    name: str
    #: Where the job came from, for messages: ``file``, ``file:override_x``, plus sweep params.
    label: str
    #: Override variant suffix (``base``, ``tp64``, ``grp_0``), or None for a plain recipe.
    variant: str | None = None
    #: Sweep parameters of this job, in sweep order (empty when not a sweep).
    sweep_params: dict[str, Any] = {}
    recipe: Recipe
    #: The resolved raw mapping the job runs (written as ``config.yaml`` / ``config_<v>.yaml``).
    document: dict[str, Any]
    #: The source's ``lock:`` section when the source is a lockfile (``recipe.lock.yaml`` of an
    #: earlier run); it is not part of ``document``.
    lock: dict[str, Any] | None = None


def _recipe_node() -> dict[str, Any]:
    schema = load_schema("recipe")
    node: dict[str, Any] = schema["$defs"]["Recipe"]
    return node


def recipe_from(doc: dict[str, Any], *, file: str) -> Recipe:
    """Type and validate one resolved document (no overrides, no sweep)."""
    normalized, issues = normalize_engines(doc, file=file)
    schema = load_schema("recipe")
    issues.extend(check_document(schema, _recipe_node(), normalized, file=file))
    if issues:
        raise RecipeError(issues)
    try:
        recipe = msgspec.convert(normalized, Recipe)
    except msgspec.ValidationError as exc:  # the structural check is the first line of defence
        raise RecipeError.single(file, "$", str(exc)) from exc
    issues = validate_recipe(recipe, normalized, file=file)
    if issues:
        raise RecipeError(issues)
    return recipe


def _plain(value: Any) -> Any:
    if isinstance(value, msgspec.Struct):
        out: dict[str, Any] = {}
        tag = type(value).__struct_config__.tag
        if isinstance(tag, str):
            out["type"] = tag
        for field in msgspec.structs.fields(value):
            item = getattr(value, field.name)
            if item is None and field.default is None:
                continue  # omitted and null mean the same; the schema may not admit null
            out[field.encode_name] = _plain(item)
        return out
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def dump_recipe(recipe: Recipe) -> dict[str, Any]:
    """The recipe as plain data (wire names), loadable again with ``recipe_from``."""
    data: dict[str, Any] = _plain(recipe)
    return data


def _load_flow(
    doc: dict[str, Any],
    *,
    label: str,
    variant: str | None,
    cluster: ClusterConfig | None,
    force_sweep: bool,
) -> list[LoadedJob]:
    issues = check_schema_version(doc, file=label)
    if issues:
        raise RecipeError(issues)
    doc = apply_cluster_defaults(doc, cluster)
    if "sweep" not in doc and not force_sweep:
        recipe = recipe_from(doc, file=label)
        return [
            LoadedJob(name=recipe.name, label=label, variant=variant, recipe=recipe, document=doc)
        ]
    jobs: list[LoadedJob] = []
    errors: list[Issue] = []
    for point in expand_sweep(doc, file=label):
        where = f"{label} [" + ", ".join(f"{k}={v}" for k, v in point.params.items()) + "]"
        try:
            recipe = recipe_from(point.document, file=where)
        except RecipeError as exc:
            errors.extend(exc.issues)
            continue
        jobs.append(
            LoadedJob(
                name=recipe.name,
                label=where,
                variant=variant,
                sweep_params=point.params,
                recipe=recipe,
                document=point.document,
            )
        )
    if errors:
        raise RecipeError(errors)
    return jobs


def load_recipe_document(
    raw: Any,
    *,
    file: str,
    cluster: ClusterConfig | None = None,
    selector: str | None = None,
    overrides: Sequence[PathOverride] = (),
    force_sweep: bool = False,
) -> tuple[LoadedJob, ...]:
    """Every job of a parsed recipe, override file or sweep, validated."""
    if not isinstance(raw, dict):
        raise RecipeError.single(
            file, "$", f"the top level must be a mapping (a recipe), got a {type(raw).__name__}"
        )
    # A lockfile is a recipe (or override file) plus its `lock:` section, kept apart.
    lock = raw.get("lock")
    body = {k: v for k, v in raw.items() if k != "lock"}
    jobs = _load_jobs(
        apply_overrides(body, tuple(overrides)),
        file=file,
        cluster=cluster,
        selector=selector,
        force_sweep=force_sweep,
    )
    if not isinstance(lock, dict):
        return jobs
    return tuple(msgspec.structs.replace(job, lock=lock) for job in jobs)


def _load_jobs(
    doc: dict[str, Any],
    *,
    file: str,
    cluster: ClusterConfig | None,
    selector: str | None,
    force_sweep: bool,
) -> tuple[LoadedJob, ...]:
    if not is_override_file(doc):
        if selector is not None:
            raise RecipeError.single(
                file,
                "$",
                f"selector {selector!r} given, but this file is not an override file (it has "
                "no `base:`); drop the selector",
            )
        return tuple(
            _load_flow(doc, label=file, variant=None, cluster=cluster, force_sweep=force_sweep)
        )
    if "schema" not in doc and "schema" not in doc.get("base", {}):
        raise RecipeError(check_schema_version({}, file=file))
    jobs: list[LoadedJob] = []
    errors: list[Issue] = []
    for variant in expand_variants(doc, file=file, selector=selector):
        try:
            jobs.extend(
                _load_flow(
                    variant.document,
                    label=f"{file}:{variant.selector}",
                    variant=variant.suffix,
                    cluster=cluster,
                    force_sweep=force_sweep,
                )
            )
        except RecipeError as exc:
            errors.extend(exc.issues)
    if errors:
        raise RecipeError(errors)
    if not jobs:
        raise RecipeError.single(file, "$", "the override file defines no variants")
    return tuple(jobs)


def load_recipe_text(
    text: str,
    *,
    file: str,
    cluster: ClusterConfig | None = None,
    selector: str | None = None,
    overrides: Sequence[PathOverride] = (),
    force_sweep: bool = False,
) -> tuple[LoadedJob, ...]:
    """Parse and load recipe text (see ``load_recipe_document``)."""
    raw = parse_yaml(text, file=file)
    return load_recipe_document(
        raw,
        file=file,
        cluster=cluster,
        selector=selector,
        overrides=overrides,
        force_sweep=force_sweep,
    )
