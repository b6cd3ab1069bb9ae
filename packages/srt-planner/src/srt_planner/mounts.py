"""Container mounts of every containerized step (docs/planner.md#mounts).

Order: built-ins (log dir -> /logs, model dir -> /model), cluster ``default_mounts``, recipe
``extra_mount``, recipe ``container_mounts``; a later entry with the same container path replaces
an earlier one, so the documented priority holds (container_mounts > extra_mount > default_mounts
> built-ins). ``$VARS`` are left for the shell of the submitting side (the planner reads no
environment).
"""

from __future__ import annotations

from collections.abc import Mapping

from srt_planner.env import render_placeholders
from srt_planner.errors import PlanningError
from srt_planner.plan import Mount
from srt_schema.cluster import ClusterConfig
from srt_schema.recipe import Recipe

__all__ = ["HF_PREFIX", "build_mounts", "is_hf_model"]

HF_PREFIX = "hf:"


def is_hf_model(path: str) -> bool:
    return path.startswith(HF_PREFIX)


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
