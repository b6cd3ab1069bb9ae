"""Where jobs go and which interpreter runs the in-allocation runtime (read at the edge)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from srt_cli.environment import Edge
    from srt_schema.cluster import ClusterConfig

__all__ = ["output_base", "runtime_python"]


def output_base(edge: Edge, cluster: ClusterConfig | None, option: str | None) -> str:
    """``-o`` > srtslurm.yaml ``output_dir`` > ``<srtctl_root>/outputs`` > ``./outputs``."""
    if option:
        chosen = Path(option)
    elif cluster is not None and cluster.output_dir:
        chosen = Path(os.path.expandvars(cluster.output_dir)).expanduser()
    elif cluster is not None and cluster.srtctl_root:
        chosen = Path(os.path.expandvars(cluster.srtctl_root)).expanduser() / "outputs"
    else:
        chosen = Path("outputs")
    if not chosen.is_absolute():
        chosen = edge.cwd / chosen
    return str(chosen)


def runtime_python(cluster: ClusterConfig | None) -> str:
    """``runtime_python`` (an interpreter or a venv root), else the interpreter running srtctl."""
    value = cluster.runtime_python if cluster is not None else None
    if not value:
        return sys.executable
    value = value.rstrip("/")
    if value.rsplit("/", 1)[-1].startswith("python"):
        return value
    return f"{value}/bin/python"
