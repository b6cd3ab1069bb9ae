"""Which program, and which version of it, each planned process runs (docs/flag-check.md).

Pure, split from :mod:`srt_planner.flagcheck` (which checks the flags): a process's program is
found in its argv (``python -m sglang.launch_server``, ``smg``...); its version, per program
family, from the Dynamo srt installs for the job, the versions ``srtctl preflight`` probed where
the job runs (:class:`Installed`, read by the CLI), ``srtslurm.yaml`` ``container_versions``,
or the image tag; and the catalog its flags are checked against is that version's, or the
nearest catalogued one.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import assert_never

import msgspec

from srt_planner.context import container_runtime_of
from srt_planner.dynamo_install import (
    INSTALL_SCRIPT,
    GitSource,
    PypiSource,
    TopOfTreeSource,
    WheelFile,
    WheelVersion,
    install_source_of,
)
from srt_planner.plan import JobPlan, ProcessSpec
from srt_schema.cluster import ClusterConfig
from srt_schema.recipe import Recipe

__all__ = [
    "CATALOG_TOOLS",
    "FAMILY_DISTRIBUTIONS",
    "CatalogChoice",
    "Installed",
    "family_of",
    "image_of",
    "pinned_version",
    "program_of",
    "resolve_catalogs",
    "version_key",
]


class Installed(msgspec.Struct, frozen=True, kw_only=True):
    """Versions read where a job's programs run: this interpreter's install, or what
    ``srtctl preflight`` probed in the runtime interpreter or image (the CLI reads them)."""

    #: Said after the version in messages: ``this host's install``, ``probed in ...``.
    where: str
    #: Program family (``dynamo``, ``sglang``, ``sglang-router``...) -> version; a family that
    #: is not installed there is absent.
    versions: dict[str, str] = {}


class CatalogChoice(msgspec.Struct, frozen=True, kw_only=True):
    """The catalog one program of one process is checked against, and why."""

    process: str
    tool: str
    #: The version resolved (None: unresolved) and where it came from.
    version: str | None
    where: str
    #: The catalogued version the check uses: ``version`` itself when ``exact``, else the nearest.
    catalog: str
    exact: bool


#: Program family -> the distribution that installs it (what a probe asks the metadata of).
FAMILY_DISTRIBUTIONS = {
    "dynamo": "ai-dynamo",
    "sglang": "sglang",
    "vllm": "vllm",
    "sglang-router": "sglang-router",
    "smg": "smg",
    "vllm-router": "vllm-router",
}


def family_of(tool: str) -> str:
    """``dynamo-frontend`` -> ``dynamo``: the Dynamo catalogs share one installed package."""
    return "dynamo" if tool.startswith("dynamo-") else tool


#: Programs with catalogs, by the module / executable the argv names.
_MODULES: dict[str, tuple[str, ...]] = {
    "sglang.launch_server": ("sglang",),
    "dynamo.sglang": ("sglang", "dynamo-sglang"),
    "vllm.entrypoints.cli.main": ("vllm",),
    "vllm.entrypoints.openai.api_server": ("vllm",),
    "dynamo.vllm": ("vllm", "dynamo-vllm"),
    "dynamo.frontend": ("dynamo-frontend",),
    "sglang_router.launch_router": ("sglang-router",),
}
_EXECUTABLES: dict[str, tuple[str, ...]] = {
    "vllm": ("vllm",),
    "smg": ("smg",),
    "vllm-router": ("vllm-router",),
}
CATALOG_TOOLS = (
    "sglang",
    "vllm",
    "dynamo-frontend",
    "dynamo-sglang",
    "dynamo-vllm",
    "sglang-router",
    "smg",
    "vllm-router",
)
_ENGINE_OF_TOOL = {"sglang": "sglang", "vllm": "vllm"}


def version_key(version: str) -> tuple[tuple[int, int | str], ...]:
    """Release order: ``0.5.8 < 0.5.8.post1 < 0.5.11``; other text sorts after numbers."""
    parts = re.split(r"[.\-+]", version)
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts)


def program_of(argv: tuple[str, ...]) -> tuple[tuple[str, ...], int] | None:
    """(catalog tools, index of the first argument) of a process argv, or None (unchecked)."""
    for i, token in enumerate(argv):
        if token == "-m" and i + 1 < len(argv) and argv[i + 1] in _MODULES:
            module = argv[i + 1]
            start = i + 2
            if module == "vllm.entrypoints.cli.main" and argv[start : start + 1] == ("serve",):
                start += 2  # serve <model>
            return _MODULES[module], start
        name = token.rsplit("/", 1)[-1]
        if name in _EXECUTABLES:
            start = i + 1
            if name == "vllm":
                if argv[start : start + 1] != ("serve",):
                    return None
                start += 2
            if name == "smg" and argv[start : start + 1] == ("launch",):
                start += 1
            return _EXECUTABLES[name], start
    return None


def _image_version(image: str, tool: str) -> str | None:
    """``lmsysorg/sglang:v0.5.8-cu130`` -> ``0.5.8`` for sglang; Dynamo runtime images for the
    Dynamo tools (``nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.2``)."""
    if ":" not in image.rsplit("/", 1)[-1]:
        return None
    repo, tag = image.rsplit(":", 1)
    match = re.match(r"^v?(\d+\.\d+(?:\.\d+)?(?:\.post\d+|rc\d+)?)(?:$|[-_])", tag)
    if match is None:
        return None
    engine = _ENGINE_OF_TOOL.get(tool)
    dynamo_image = "ai-dynamo/" in repo and repo.endswith("-runtime")
    if tool.startswith("dynamo-"):
        return match.group(1) if dynamo_image else None
    if engine is not None and not dynamo_image and engine in repo.rsplit("/", 1)[-1]:
        return match.group(1)
    return None


def _declared(cluster: ClusterConfig, image: str) -> dict[str, str]:
    """``container_versions`` of ``image``, keyed by the image or by an alias naming it."""
    table = cluster.container_versions or {}
    if image in table:
        return table[image]
    for alias, target in (cluster.containers or {}).items():
        if target == image and alias in table:
            return table[alias]
    return {}


def _pinned(tool: str, image: str, cluster: ClusterConfig) -> tuple[str, str] | None:
    """(version, where) of ``tool`` in ``image`` as srtslurm.yaml or the image's tag says."""
    declared = _declared(cluster, image)
    family = family_of(tool)
    if family in declared:
        return declared[family], "srtslurm.yaml container_versions"
    found = _image_version(image, tool)
    return (found, f"image {image}") if found is not None else None


def pinned_version(tool: str, image: str | None, cluster: ClusterConfig) -> str | None:
    """The version of ``tool`` a container ``image`` runs, as the recipe and srtslurm.yaml say
    (``container_versions``, the tag; never a probe or the host): what an argv builder may adapt
    srt's own flags to (None: not said, or no containers)."""
    if image is None or container_runtime_of(cluster) == "none":
        return None
    found = _pinned(tool, image, cluster)
    return found[0] if found is not None else None


def _dynamo_install(plan: JobPlan, recipe: Recipe) -> tuple[str | None, str] | None:
    """(version, where) of the Dynamo srt installs for the job's Dynamo steps, when the plan
    installs one (its install script, srt_planner.dynamo_install): that is what they run,
    whatever the image holds. A git or wheel-file source has no version to check."""
    if not any(f.path == INSTALL_SCRIPT for f in plan.files):
        return None
    match install_source_of(recipe):
        case PypiSource(version=version):
            pinned = recipe.dynamo.source is not None and recipe.dynamo.source.pypi
            return version, (
                "dynamo.source" if pinned else "the Dynamo release srt installs by default"
            )
        case WheelVersion(version=version):
            return version, "dynamo.source"
        case WheelFile() | GitSource() | TopOfTreeSource():
            return None, "srt's Dynamo install from source"
        case other:
            assert_never(other)


def _resolve(
    tool: str, image: str | None, plan: JobPlan, recipe: Recipe, context: _Context
) -> tuple[str | None, str]:
    """(version, where it came from) of ``tool`` in a process running ``image``."""
    family = family_of(tool)
    on_host = plan.container_runtime == "none"
    if family == "dynamo":
        installed = _dynamo_install(plan, recipe)
        if installed is not None:
            return installed
    if image is not None and not on_host:
        probed = context.images.get(image)
        if probed is not None and family in probed.versions:
            return probed.versions[family], probed.where
        pinned = _pinned(tool, image, context.cluster)
        if pinned is not None:
            return pinned
    host = context.host
    if on_host and host is not None and family in host.versions:
        return host.versions[family], host.where
    if on_host:
        return None, f"not installed; {host.where}" if host is not None else "the host's install"
    return None, f"image {image}" if image else "no container"


def _nearest(versions: list[str], version: str | None) -> str:
    ordered = sorted(versions, key=version_key)
    if version is None:
        return ordered[-1]
    below = [v for v in ordered if version_key(v) <= version_key(version)]
    return below[-1] if below else ordered[0]


class _Context(msgspec.Struct, frozen=True, kw_only=True):
    cluster: ClusterConfig
    host: Installed | None
    images: Mapping[str, Installed]


def resolve_catalogs(
    plan: JobPlan,
    recipe: Recipe,
    cluster: ClusterConfig,
    catalogs: Mapping[str, Collection[str]],
    *,
    host: Installed | None = None,
    images: Mapping[str, Installed] | None = None,
) -> list[CatalogChoice]:
    """For every process srt launches with a catalogued program, each program's version (where
    it came from) and the catalog the check uses for it. ``host``: the versions where a
    ``container_runtime: none`` job runs its programs; ``images``: versions probed in each
    container image (pyxis). Both are read by the caller."""
    context = _Context(cluster=cluster, host=host, images=dict(images or {}))
    out: list[CatalogChoice] = []
    for process in plan.processes:
        found = program_of(tuple(process.stand_in_for or process.argv))
        if found is None:
            continue
        image = image_of(recipe, process)
        for tool in found[0]:
            available = catalogs.get(tool, {})
            if not available:
                continue
            version, where = _resolve(tool, image, plan, recipe, context)
            exact = version is not None and version in available
            out.append(
                CatalogChoice(
                    process=process.name,
                    tool=tool,
                    version=version,
                    where=where,
                    catalog=version if exact and version else _nearest(list(available), version),
                    exact=exact,
                )
            )
    return out


def image_of(recipe: Recipe, process: ProcessSpec) -> str | None:
    if process.container is not None:
        return process.container.image
    if process.kind == "frontend":
        return recipe.frontend.container_image or recipe.model.container
    role = recipe.roles.get(process.role)
    return (role.container if role is not None else None) or recipe.model.container
