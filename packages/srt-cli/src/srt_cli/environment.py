"""The world the CLI reads, captured once at the edge: working folder, environment, cluster file.

Cluster config discovery (``$SRTSLURM_CONFIG``, else ``srtslurm.yaml`` in the current folder or a
parent) happens here, once per command, and only for commands that need it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from srt_cli.errors import translated

if TYPE_CHECKING:
    from srt_schema.cluster import ClusterConfig

__all__ = ["Cluster", "Edge", "read_cluster", "read_edge"]


@dataclass(frozen=True)
class Edge:
    """What the process was started with (cwd and environment), read once by the group."""

    cwd: Path
    environ: dict[str, str] = field(default_factory=dict)

    @property
    def runner_name(self) -> str | None:
        """``RUNNER_NAME`` overrides the Slurm job name (docs/recipes.md#job-naming)."""
        return self.environ.get("RUNNER_NAME") or None


@dataclass(frozen=True)
class Cluster:
    """The cluster config in effect (``config`` is None when there is no srtslurm.yaml)."""

    path: Path | None
    config: ClusterConfig | None

    def effective(self) -> ClusterConfig:
        """The config, or every default when there is no file."""
        from srt_schema.cluster import ClusterConfig

        return self.config if self.config is not None else ClusterConfig()


def read_edge() -> Edge:
    return Edge(cwd=Path.cwd(), environ=dict(os.environ))


def read_cluster(edge: Edge) -> Cluster:
    """Find and read srtslurm.yaml; a file that does not load is an error (exit 2)."""
    from srt_schema.discovery import find_cluster_config, read_cluster_config

    with translated():
        path = find_cluster_config(edge.cwd, edge.environ)
        if path is None:
            return Cluster(path=None, config=None)
        return Cluster(path=path, config=read_cluster_config(path))
