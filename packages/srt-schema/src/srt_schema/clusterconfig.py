"""``srtslurm.yaml``: parsed strictly into a ClusterConfig, and applied to a raw recipe.

Unlike the reference, a cluster file with an unknown key or a wrong type is an error that names
it (ClusterConfigError), never a silent "no cluster config" that renders ``--partition=default``.
Defaults are applied to the raw document before typing (docs/recipes.md#cluster-config).
"""

from __future__ import annotations

import copy
from typing import Any

import msgspec

from srt_schema.cluster import ClusterConfig
from srt_schema.credentials import credential_issues
from srt_schema.errors import ClusterConfigError, Issue, RecipeError
from srt_schema.schemas import load_schema
from srt_schema.structural import check_document
from srt_schema.validate.unsupported_rules import cluster_issues
from srt_schema.yamlio import parse_yaml

__all__ = ["apply_cluster_defaults", "parse_cluster_config"]

#: Keys whose string value is a container image and may be an alias
#: (docs/recipes.md#cluster-config).
_IMAGE_KEYS = frozenset({"container", "container_image", "image", "nginx_container"})
#: Subtrees never searched for container aliases.
_OPAQUE_KEYS = frozenset(
    {
        "identity",
        "environment",
        "env",
        "args",
        "extra_args",
        "container_mounts",
        "sbatch_directives",
        "srun_options",
        "store_config",
    }
)


def parse_cluster_config(text: str, *, file: str) -> ClusterConfig:
    """Parse and validate ``srtslurm.yaml`` text; every problem is reported at once."""
    try:
        raw = parse_yaml(text, file=file)
    except RecipeError as exc:
        raise ClusterConfigError(exc.issues) from exc
    if not isinstance(raw, dict):
        raise ClusterConfigError(
            [Issue(file=file, path="$", message="srtslurm.yaml must be a mapping of settings")]
        )
    schema = load_schema("cluster")
    issues = check_document(schema, schema, raw, file=file)
    if issues:
        raise ClusterConfigError(issues)
    try:
        config = msgspec.convert(raw, ClusterConfig)
    except msgspec.ValidationError as exc:  # the structural check should have caught it
        raise ClusterConfigError([Issue(file=file, path="$", message=str(exc))]) from exc
    refused = [*cluster_issues(config, file=file), *credential_issues(raw, file=file)]
    if refused:
        raise ClusterConfigError(refused)
    return config


def _is_opaque(key: str) -> bool:
    return (
        key in _OPAQUE_KEYS
        or key.endswith("_environment")
        or key.endswith("_extra_args")
        or key.endswith("_config")
    )


def _resolve_images(node: Any, aliases: dict[str, str]) -> Any:
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if isinstance(key, str) and _is_opaque(key):
                out[key] = value
            elif key in _IMAGE_KEYS and isinstance(value, str) and value in aliases:
                out[key] = aliases[value]
            else:
                out[key] = _resolve_images(value, aliases)
        return out
    if isinstance(node, list):
        return [_resolve_images(v, aliases) for v in node]
    return node


def _dump(value: msgspec.Struct) -> dict[str, Any]:
    data: dict[str, Any] = msgspec.to_builtins(value)
    return data


def apply_cluster_defaults(doc: dict[str, Any], cluster: ClusterConfig | None) -> dict[str, Any]:
    """A copy of the raw recipe with the cluster's defaults and aliases applied
    (docs/recipes.md#cluster-config order)."""
    out = copy.deepcopy(doc)
    if cluster is None:
        return out
    slurm = out.get("slurm")
    if slurm is None or isinstance(slurm, dict):
        slurm = {} if slurm is None else slurm
        for key, value in (
            ("account", cluster.default_account),
            ("partition", cluster.default_partition),
            ("time_limit", cluster.default_time_limit),
        ):
            if key not in slurm and value:
                slurm[key] = value
        if slurm or "slurm" in out:
            out["slurm"] = slurm
    resources = out.get("resources")
    if isinstance(resources, dict):
        if not resources.get("gpu_type") and cluster.default_gpu_type:
            resources["gpu_type"] = cluster.default_gpu_type
        if "gpus_per_node" not in resources and cluster.gpus_per_node is not None:
            resources["gpus_per_node"] = cluster.gpus_per_node
        if resources.get("het_jobs") is None:
            resources["het_jobs"] = bool(cluster.use_het_jobs)
    if cluster.default_sbatch_directives:
        directives = out.get("sbatch_directives")
        if directives is None or isinstance(directives, dict):
            merged = dict(cluster.default_sbatch_directives)
            merged.update(directives or {})
            out["sbatch_directives"] = merged
    model = out.get("model")
    if isinstance(model, dict) and cluster.model_paths:
        path = model.get("path")
        if isinstance(path, str) and path in cluster.model_paths:
            model["path"] = cluster.model_paths[path]
    if cluster.default_gpu_exporter is not None:
        observability = out.setdefault("observability", {})
        if isinstance(observability, dict):
            tachometer = observability.setdefault("tachometer", {})
            if isinstance(tachometer, dict) and "default_gpu_exporter" not in tachometer:
                # power_profile is cluster-only (the recipe's exporter has no such key; a
                # non-dcgm profile is refused when srtslurm.yaml is parsed).
                exporter = _dump(cluster.default_gpu_exporter)
                exporter.pop("power_profile", None)
                tachometer["default_gpu_exporter"] = exporter
    if cluster.containers:
        out = _resolve_images(out, dict(cluster.containers))
    if "reporting" not in out and cluster.reporting is not None:
        out["reporting"] = _dump(cluster.reporting)
    if "health_check" not in out and cluster.default_health_check is not None:
        out["health_check"] = dict(cluster.default_health_check)
    if "host_setup" not in out and cluster.default_host_setup is not None:
        out["host_setup"] = _dump(cluster.default_host_setup)
    frontend = out.get("frontend")
    if cluster.nginx_raise_ulimit is not None and (frontend is None or isinstance(frontend, dict)):
        frontend = {} if frontend is None else frontend
        if "nginx_raise_ulimit" not in frontend:
            frontend["nginx_raise_ulimit"] = cluster.nginx_raise_ulimit
            out["frontend"] = frontend
    return out
