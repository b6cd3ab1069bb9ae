"""Container mounts of every containerized step (docs/planner.md#mounts).

Order: built-ins (log dir -> /logs, model dir -> /model, the parent of ``model.stage_dir`` on the
same path, so the staging step can create the staged copy and engines read it), cluster
``default_mounts``, recipe
``extra_mount``, recipe ``container_mounts``; a later entry with the same container path replaces
an earlier one, so the documented priority holds (container_mounts > extra_mount > default_mounts
> built-ins). ``$VARS`` are left for the shell of the submitting side (the planner reads no
environment).
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping

from srt_planner.env import render_placeholders
from srt_planner.errors import PlanningError
from srt_planner.plan import Mount
from srt_schema.cluster import ClusterConfig
from srt_schema.recipe import Recipe

__all__ = ["HF_PREFIX", "build_mounts", "is_hf_model", "model_dir_name", "staged_model_path"]

HF_PREFIX = "hf:"


def is_hf_model(path: str) -> bool:
    return path.startswith(HF_PREFIX)


def model_dir_name(path: str) -> str:
    """The model folder's own name (``/models/Llama-3/`` -> ``Llama-3``)."""
    return posixpath.basename(path.rstrip("/"))


def staged_model_path(recipe: Recipe) -> str | None:
    """Where model staging puts the copy, ``<stage_dir>/<model dir name>`` (None: no staging, or
    an ``hf:`` model, which has no folder to copy)."""
    stage_dir = recipe.model.stage_dir
    if stage_dir is None or is_hf_model(recipe.model.path):
        return None
    return posixpath.join(stage_dir.rstrip("/") or "/", model_dir_name(recipe.model.path))


def _extra(entry: str) -> Mount:
    parts = entry.split(":")
    readonly = len(parts) == 3 and parts[2] == "ro"
    if len(parts) not in (2, 3) or (len(parts) == 3 and not readonly) or not all(parts[:2]):
        raise PlanningError(
            f"$.extra_mount: {entry!r} is not 'host:container' or 'host:container:ro'"
        )
    return Mount(host=parts[0], container=parts[1], readonly=readonly, source="recipe")


def build_mounts(
    recipe: Recipe, cluster: ClusterConfig, *, log_dir: str, placeholders: Mapping[str, str]
) -> tuple[Mount, ...]:
    """Mounts in priority order, one per container path."""
    ordered: dict[str, Mount] = {}

    def add(mount: Mount) -> None:
        ordered.pop(mount.container, None)
        ordered[mount.container] = mount

    add(Mount(host=log_dir, container="/logs", source="built-in"))
    if not is_hf_model(recipe.model.path):
        add(Mount(host=recipe.model.path, container="/model", source="built-in"))
    staged = staged_model_path(recipe)
    if staged is not None:
        # The parent of the staged copy's folder: stage_dir itself may not exist before the
        # staging step creates it (docs/planner.md#model-staging).
        parent = posixpath.dirname(posixpath.dirname(staged))
        add(Mount(host=parent, container=parent, source="built-in"))
    for host, container in sorted((cluster.default_mounts or {}).items()):
        add(Mount(host=host, container=container, source="cluster"))
    for entry in recipe.extra_mount or ():
        add(_extra(entry))
    for host, container in recipe.container_mounts.items():
        add(
            Mount(
                host=render_placeholders(host, placeholders),
                container=render_placeholders(container, placeholders),
                source="recipe",
            )
        )
    return tuple(ordered.values())
