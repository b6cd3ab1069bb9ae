"""Finding and reading ``srtslurm.yaml`` (the edge: reads the environment and the filesystem).

Order: ``$SRTSLURM_CONFIG`` (which must exist when set), else ``srtslurm.yaml`` in the current
folder or any parent. No file is fine (no cluster defaults); a file that does not validate is an
error, never silently ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from srt_schema.cluster import ClusterConfig
from srt_schema.clusterconfig import parse_cluster_config
from srt_schema.errors import ClusterConfigError, Issue

__all__ = ["find_cluster_config", "read_cluster_config"]

ENV_VAR = "SRTSLURM_CONFIG"
FILE_NAME = "srtslurm.yaml"


def find_cluster_config(cwd: Path, environ: Mapping[str, str]) -> Path | None:
    explicit = environ.get(ENV_VAR)
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise ClusterConfigError(
                [
                    Issue(
                        file=str(path),
                        path="$",
                        message=(
                            f"{ENV_VAR} points at a folder, not a file; fix or unset it"
                            if path.is_dir()
                            else f"{ENV_VAR} points at a file that does not exist; fix or unset it"
                        ),
                    )
                ]
            )
        return path
    for folder in (cwd, *cwd.parents):
        candidate = folder / FILE_NAME
        if candidate.is_file():
            return candidate
    return None


def read_cluster_config(path: Path) -> ClusterConfig:
    from srt_schema.errors import RecipeError
    from srt_schema.yamlio import decode_yaml_bytes

    try:
        data = path.read_bytes()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        issue = Issue(
            file=str(path), path="$", message=f"cannot be read ({reason}); fix or move it"
        )
        raise ClusterConfigError([issue]) from exc
    try:
        text = decode_yaml_bytes(data, file=str(path))
    except RecipeError as exc:
        raise ClusterConfigError(exc.issues) from exc
    return parse_cluster_config(text, file=str(path))
