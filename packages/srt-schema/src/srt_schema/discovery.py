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
                        message=f"{ENV_VAR} points at a file that does not exist; fix or unset it",
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
    return parse_cluster_config(path.read_text(), file=str(path))
