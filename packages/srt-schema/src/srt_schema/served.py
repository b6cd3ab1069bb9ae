"""The one model name a deployment serves, decided once from the recipe.

Every worker is told to serve it, and every client of the deployment (the benchmark config,
post_eval's ``MODEL_NAME``, the health gate's model check, routers that take a model id, the
dashboard) asks for it. Where a recipe names it depends on the engine, following each engine's
own flag:

- SGLang, vLLM and ATOM: ``served-model-name`` in a role's ``args`` (vLLM accepts a list of
  names: the first is the one clients use);
- the Dynamo mocker: ``model-name`` in a role's ``args``;
- TRT-LLM and TileRT: ``engine.served_model_name`` (a role's own engine, or the recipe's);
  TileRT also ``served-model-name`` in a role's ``args``;
- otherwise the last component of ``model.path`` (the HF id's name for ``hf:`` models).

A name given on one role applies to the whole deployment (a prefill worker registered under
another name than its decode peers would never receive a request). Two roles that give
different names are a validation error (``srt_schema.validate.served_rules``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, assert_never

import msgspec

from srt_schema.recipe import (
    AtomBackend,
    MockerBackend,
    Recipe,
    SGLangBackend,
    TileRTBackend,
    TRTLLMBackend,
    VLLMBackend,
)
from srt_schema.roles import ROLE_NAMES, RoleName, engine_of

__all__ = [
    "HF_MODEL_PREFIX",
    "NamedBy",
    "default_served_name",
    "parse_hf_model",
    "served_model_name",
    "served_names_by_role",
]

#: ``model.path`` prefix of a model pulled from the Hugging Face hub by the engine.
HF_MODEL_PREFIX = "hf:"

#: Role ``args`` keys that name the served model, per engine family (both spellings).
_SERVED_ARG = ("served-model-name", "served_model_name")
_MOCKER_ARG = ("model-name", "model_name")


class NamedBy(msgspec.Struct, frozen=True, kw_only=True):
    """Where one role's engine is told its served name: the name and the recipe's ``$.path``."""

    name: str
    path: str


#: A hub repository id: ``<name>`` or ``<org>/<name>`` of letters, digits and ``-_.``.
_HUB_REPO = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9_.\-]*/)?[A-Za-z0-9][A-Za-z0-9_.\-]*$")


def parse_hf_model(model_path: str) -> tuple[str, str | None]:
    """``hf:<org>/<name>[@revision]`` -> (repo id, revision or None); ValueError when the id is
    not a hub repository id."""
    body = model_path[len(HF_MODEL_PREFIX) :] if model_path.startswith(HF_MODEL_PREFIX) else ""
    repo, _, revision = body.partition("@")
    if not _HUB_REPO.match(repo) or ".." in repo or ("@" in body and not revision):
        raise ValueError(
            f"{model_path!r} is not hf:<org>/<name>[@revision] (e.g. hf:Qwen/Qwen3-0.6B)"
        )
    return repo, revision or None


def default_served_name(model_path: str) -> str:
    """The last component of the model path (or of the HF id for ``hf:`` models)."""
    path = (
        model_path[len(HF_MODEL_PREFIX) :].partition("@")[0]
        if model_path.startswith(HF_MODEL_PREFIX)
        else model_path
    )
    return path.rstrip("/").rsplit("/", 1)[-1]


def _first(value: Any) -> str | None:
    """An args value as a name: a string, or the first item of a list (vLLM's many names)."""
    if isinstance(value, list):
        value = value[0] if value else None
    if value is None or value is False or value is True:
        return None
    return str(value)


def _from_args(args: Mapping[str, Any], keys: tuple[str, ...], role: RoleName) -> NamedBy | None:
    for key in keys:
        if key in args:
            name = _first(args[key])
            if name is not None:
                return NamedBy(name=name, path=f"$.roles.{role}.args.{key}")
    return None


def _named_by(recipe: Recipe, role: RoleName) -> NamedBy | None:
    config = recipe.roles[role]
    engine = engine_of(recipe, role)
    match engine:
        case SGLangBackend() | VLLMBackend() | AtomBackend():
            return _from_args(config.args, _SERVED_ARG, role)
        case MockerBackend():
            return _from_args(config.args, _MOCKER_ARG, role)
        case TRTLLMBackend() | TileRTBackend():
            if engine.served_model_name is not None:
                own = config.engine is not None
                where = f"$.roles.{role}.engine" if own else "$.engine"
                return NamedBy(name=engine.served_model_name, path=f"{where}.served_model_name")
            # TileRT's server takes the flag from args too; TRT-LLM's args are its engine YAML.
            if isinstance(engine, TileRTBackend):
                return _from_args(config.args, _SERVED_ARG, role)
            return None
        case _:
            assert_never(engine)


def served_names_by_role(recipe: Recipe) -> dict[RoleName, NamedBy]:
    """The roles whose recipe text names the served model, in prefill, decode, agg order."""
    out: dict[RoleName, NamedBy] = {}
    for role in ROLE_NAMES:
        if role in recipe.roles:
            named = _named_by(recipe, role)
            if named is not None:
                out[role] = named
    return out


def served_model_name(recipe: Recipe) -> str:
    """The name the deployment serves and every client asks for.

    The first role (prefill, decode, agg order) that names one wins; validation refuses recipes
    whose roles disagree, so for a valid recipe the order never matters.
    """
    for named in served_names_by_role(recipe).values():
        return named.name
    return default_served_name(recipe.model.path)
