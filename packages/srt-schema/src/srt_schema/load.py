"""The recipe loading pipeline (docs/recipes.md#loading-pipeline), every step a pure function.

text ─parse_yaml─▶ raw ─--set/--unset─▶ override variants ─schema gate─▶ cluster defaults
     ─sweep expansion─▶ engine normalisation ─structural check─▶ msgspec Recipe ─cross-field rules─▶

Every issue of every variant and sweep point is collected and raised together as one
RecipeError; nothing is printed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import msgspec

from srt_schema.cluster import ClusterConfig
from srt_schema.clusterconfig import apply_cluster_defaults
from srt_schema.credentials import credential_issues
from srt_schema.errors import Issue, RecipeError
from srt_schema.gate import check_schema_version, schema_key_typo
from srt_schema.normalize import normalize_engines
from srt_schema.overrides import Variant, check_layout, expand_variants, is_override_file
from srt_schema.recipe import Recipe
from srt_schema.registry import BENCHMARK_FIELDS
from srt_schema.schemas import load_schema
from srt_schema.served import HF_MODEL_PREFIX
from srt_schema.setpaths import PathOverride, apply_overrides
from srt_schema.structural import check_document
from srt_schema.sweep import expand_sweep
from srt_schema.validate import validate_recipe
from srt_schema.validate.names_rules import raw_name_issues
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

    def sets(self, *path: str) -> bool:
        """Whether the job's resolved document writes this key (the recipe, its override
        variant, sweep point or srtslurm.yaml's defaults), as opposed to the schema's default
        filling it in: ``job.sets("observability", "tachometer", "collect_interval_ms")``."""
        return _holds(self.document, path) and _value_at(self.document, path) is not None


def _value_at(node: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        node = node[part]
    return node


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
        # The cross-field rules need a typed recipe; the checks that read the raw document
        # still run, so a type error does not hide an unsafe name.
        seen = {issue.path for issue in issues}
        issues.extend(i for i in raw_name_issues(normalized, file=file) if i.path not in seen)
        raise RecipeError(issues)
    try:
        recipe = msgspec.convert(normalized, Recipe)
    except msgspec.ValidationError as exc:  # the structural check is the first line of defence
        raise RecipeError.single(file, "$", str(exc)) from exc
    issues = validate_recipe(recipe, normalized, file=file)
    issues.extend(credential_issues(normalized, file=file))
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


def with_tokenizer(doc: dict[str, Any], tokenizer: str | None) -> dict[str, Any]:
    """``doc`` with ``benchmark.custom_tokenizer`` set to ``tokenizer`` when its benchmark type
    reads one (a caller-supplied local tokenizer: the stand-in engine mode's); else ``doc``.

    An ``hf:`` model whose recipe names no ``custom_tokenizer`` keeps its own: the benchmark
    client fetches it from the hub (``HF_ENDPOINT``) as in a real run, so that path is exercised
    too (docs/design.md#stand-in-engines)."""
    bench = doc.get("benchmark")
    if tokenizer is None or not isinstance(bench, dict):
        return doc
    model = doc.get("model")
    path = model.get("path") if isinstance(model, dict) else None
    if (
        isinstance(path, str)
        and path.startswith(HF_MODEL_PREFIX)
        and not bench.get("custom_tokenizer")
    ):
        return doc
    kind = bench.get("type", "manual")
    if "custom_tokenizer" not in BENCHMARK_FIELDS.get(kind if isinstance(kind, str) else "", ()):
        return doc
    return {**doc, "benchmark": {**bench, "custom_tokenizer": tokenizer}}


def _load_flow(
    doc: dict[str, Any],
    *,
    label: str,
    variant: str | None,
    cluster: ClusterConfig | None,
    force_sweep: bool,
    tokenizer: str | None = None,
) -> list[LoadedJob]:
    issues = check_schema_version(doc, file=label)
    if issues:
        raise RecipeError(issues)
    doc = apply_cluster_defaults(doc, cluster)
    if "sweep" not in doc and not force_sweep:
        doc = with_tokenizer(doc, tokenizer)
        recipe = recipe_from(doc, file=label)
        return [
            LoadedJob(name=recipe.name, label=label, variant=variant, recipe=recipe, document=doc)
        ]
    jobs: list[LoadedJob] = []
    errors: list[Issue] = []
    for point in expand_sweep(doc, file=label):
        where = f"{label} [" + ", ".join(f"{k}={v}" for k, v in point.params.items()) + "]"
        document = with_tokenizer(point.document, tokenizer)
        try:
            recipe = recipe_from(document, file=where)
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
                document=document,
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
    tokenizer: str | None = None,
) -> tuple[LoadedJob, ...]:
    """Every job of a parsed recipe, override file or sweep, validated. ``tokenizer``: a local
    tokenizer folder every job whose benchmark reads one gets as ``benchmark.custom_tokenizer``
    (:func:`with_tokenizer`; the stand-in engine mode's stand-in model)."""
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
        tokenizer=tokenizer,
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
    tokenizer: str | None = None,
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
            _load_flow(
                doc,
                label=file,
                variant=None,
                cluster=cluster,
                force_sweep=force_sweep,
                tokenizer=tokenizer,
            )
        )
    layout = check_layout(doc, file)
    if layout:
        raise RecipeError(layout)
    base: dict[str, Any] = doc["base"]
    if "schema" not in doc and "schema" not in base:
        typo = schema_key_typo(doc)
        raise RecipeError(
            check_schema_version(doc, file=file)
            if typo is not None
            else check_schema_version(base, file=file, path="$.base")
        )
    # An unsafe base name makes every derived variant name (`<base>_<suffix>`) unsafe: said once.
    base_name = [
        Issue(file=file, path="$.base.name", message=issue.message)
        for issue in raw_name_issues({"name": base.get("name")}, file=file)
    ]
    jobs: list[LoadedJob] = []
    failed: list[tuple[Variant, tuple[Issue, ...]]] = []
    variants = expand_variants(doc, file=file, selector=selector)
    for variant in variants:
        try:
            jobs.extend(
                _load_flow(
                    variant.document,
                    label=f"{file}:{variant.selector}",
                    variant=variant.suffix,
                    cluster=cluster,
                    force_sweep=force_sweep,
                    tokenizer=tokenizer,
                )
            )
        except RecipeError as exc:
            failed.append((variant, exc.issues))
    if failed:
        # An issue every variant has, at a path no variant sets, is the base's: said once.
        common = set.intersection(*({(i.path, i.message) for i in found} for _, found in failed))
        if len(failed) < len(variants):
            common = set()
        errors = [
            _where(issue, doc, variant, file, base_name)
            if (issue.path, issue.message) in common or issue.path == "$.name"
            else issue
            for variant, found in failed
            for issue in found
        ]
        raise RecipeError(dict.fromkeys(errors))
    if not jobs:
        raise RecipeError.single(file, "$", "the override file defines no variants")
    return tuple(jobs)


_SEGMENT = re.compile(r'\.([A-Za-z0-9_-]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')


def _segments(path: str) -> tuple[str | int, ...] | None:
    """``$.a[2]["b.c"]`` -> ``("a", 2, "b.c")`` (None for a path not in that form)."""
    if not path.startswith("$"):
        return None
    out: list[str | int] = []
    at = 1
    while at < len(path):
        match = _SEGMENT.match(path, at)
        if match is None:
            return None
        key, index, quoted = match.groups()
        out.append(
            key if key is not None else int(index) if index is not None else json.loads(quoted)
        )
        at = match.end()
    return tuple(out)


def _holds(node: Any, path: tuple[str | int, ...]) -> bool:
    for part in path:
        if isinstance(part, int):
            if not isinstance(node, list) or part >= len(node):
                return False
        elif not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _touches(section: Any, path: tuple[str | int, ...]) -> bool:
    """Whether an override section sets (or deletes) ``path`` or a mapping above it."""
    node = section
    for part in path:
        if not isinstance(node, dict):
            return True  # the section replaces this whole value
        if part not in node:
            return False
        node = node[part]
    return True


def _where(
    issue: Issue, doc: dict[str, Any], variant: Variant, file: str, base_name: list[Issue]
) -> Issue:
    """An issue of one variant, or the same issue of the file's ``base`` when it comes from there.

    An issue is the base's when the variant's section does not set its path and the base holds
    the path (or, for a missing key, the mapping it is missing from): then every variant would
    report it, so it is reported once, at ``$.base.<path>`` of the file.
    """
    path = _segments(issue.path)
    if not path:
        return issue
    if path[0] == "schema" and "schema" in doc:
        return Issue(file=file, path=issue.path, message=issue.message)
    if variant.selector == "base":
        section: Any = {}
    else:
        section = doc[variant.selector.split("[", 1)[0]]
        if path == ("name",) and "name" not in section:
            # the variant's name is derived from the base's (``<base>_<suffix>``)
            return base_name[0] if base_name else issue
    base = doc["base"]
    if _touches(section, path) or not (_holds(base, path) or _holds(base, path[:-1])):
        return issue
    return Issue(file=file, path="$.base" + issue.path[1:], message=issue.message)


def load_recipe_text(
    text: str,
    *,
    file: str,
    cluster: ClusterConfig | None = None,
    selector: str | None = None,
    overrides: Sequence[PathOverride] = (),
    force_sweep: bool = False,
    tokenizer: str | None = None,
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
        tokenizer=tokenizer,
    )
