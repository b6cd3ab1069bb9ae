"""Facts derived once per plan and handed to every builder (engines, frontends, services)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, get_args

import msgspec

from srt_planner.carving import Carving
from srt_planner.datasets import DatasetSettings
from srt_planner.errors import PlanningError
from srt_planner.mounts import HF_PREFIX, is_hf_model, staged_model_path
from srt_planner.plan import ContainerSpec, Mount, StandIn
from srt_schema.cluster import ClusterConfig
from srt_schema.recipe import Recipe
from srt_schema.registry import FRONTENDS, canonical_frontend
from srt_schema.served import served_model_name

__all__ = [
    "DEFAULT_DYNAMO_VERSION",
    "FRONTEND_TYPES",
    "FrontendType",
    "PlanContext",
    "container_runtime_of",
    "frontend_type_of",
    "python_of",
]

#: The Dynamo release installed when ``dynamo.source`` is unset (docs/planner.md, Q14).
DEFAULT_DYNAMO_VERSION = "1.6.1"

FrontendType = Literal[
    "dynamo",
    "sglang-router",
    "smg",
    "vllm-router",
    "atomesh",
    "tilert-router",
    "sglang",
    "vllm",
    "trtllm_serve",
    "none",
]
FRONTEND_TYPES: tuple[FrontendType, ...] = get_args(FrontendType)


def frontend_type_of(recipe: Recipe) -> FrontendType:
    """``frontend.type`` as the one spelling the planner dispatches on (``sgl-router`` is
    ``sglang-router``)."""
    spelled = recipe.frontend.type
    canonical = canonical_frontend(spelled) if spelled in FRONTENDS else spelled
    for name in FRONTEND_TYPES:
        if canonical == name:
            return name
    raise PlanningError(
        f"$.frontend.type: Unknown frontend.type {recipe.frontend.type!r}. "
        f"Available: {', '.join(FRONTEND_TYPES)}"
    )


def container_runtime_of(cluster: ClusterConfig) -> Literal["pyxis", "none"]:
    """``launcher: local`` implies ``container_runtime: none`` (cluster schema)."""
    return "none" if cluster.launcher == "local" else cluster.container_runtime


def python_of(cluster: ClusterConfig) -> str:
    """The interpreter steps run with: ``python3`` in containers, ``runtime_python`` natively.

    ``runtime_python`` names an interpreter (basename starting with ``python``) or the root of a
    virtual environment (then ``<root>/bin/python``).
    """
    if container_runtime_of(cluster) == "pyxis" or not cluster.runtime_python:
        return "python3"
    value = cluster.runtime_python.rstrip("/")
    if value.rsplit("/", 1)[-1].startswith("python"):
        return value
    return f"{value}/bin/python"


class PlanContext(msgspec.Struct, frozen=True, kw_only=True):
    """Inputs every builder reads; built once by ``plan_job``."""

    recipe: Recipe
    cluster: ClusterConfig
    job_id: str
    log_dir: str
    carving: Carving
    addresses: dict[str, str]
    frontend: FrontendType
    mounts: tuple[Mount, ...]
    python: str
    #: Position of each worker node in the worker list (``{node_id}``).
    node_ids: dict[str, int] = {}
    #: Stand-in engine mode (``srt_planner.stand_in``); None: the engines run.
    stand_in: StandIn | None = None
    #: The job environment's say in downloads (``srt_planner.datasets``).
    datasets: DatasetSettings = DatasetSettings()
    #: The job's recipe (or srtslurm.yaml) sets ``observability.tachometer.collect_interval_ms``:
    #: the scraper keeps exactly that interval; else it samples each measurement window densely
    #: (``srt_planner.telemetry``).
    scrape_interval_given: bool = False

    @property
    def pyxis(self) -> bool:
        """Steps run in containers (the local launcher implies container runtime ``none``)."""
        return container_runtime_of(self.cluster) == "pyxis"

    @property
    def local(self) -> bool:
        return self.cluster.launcher == "local"

    @property
    def in_log_dir(self) -> str:
        """Where the log directory is seen by the program (``/logs`` in containers)."""
        return "/logs" if self.pyxis else self.log_dir

    @property
    def dynamo_workers(self) -> bool:
        """Workers are launched as Dynamo modules (``dynamo.<engine>``) behind a Dynamo frontend."""
        return self.frontend == "dynamo"

    @property
    def gpus_per_node(self) -> int:
        return self.recipe.resources.gpus_per_node

    def het_group(self, node: str) -> int | None:
        """The heterogeneous-job component a node belongs to (None outside het jobs)."""
        if self.carving.het_decode is None:
            return None
        return 1 if node in self.carving.het_decode else 0

    def address(self, node: str) -> str:
        return self.addresses.get(node, node)

    @property
    def model_arg(self) -> str:
        """The model every engine loads: the staged copy with ``model.stage_dir`` (on each worker
        node's own storage; not in stand-in mode, which stages nothing), else the shared folder
        (``/model`` in containers), else the HF id."""
        staged = staged_model_path(self.recipe)
        if staged is not None and self.stand_in is None:
            return staged
        return self.shared_model_arg

    @property
    def shared_model_arg(self) -> str:
        """The model as every node sees it (never the staged copy, which only worker nodes
        have): what the benchmark's tokenizer and the staging step read."""
        path = self.recipe.model.path
        if is_hf_model(path):
            return path[len(HF_PREFIX) :]
        return "/model" if self.pyxis else path

    @property
    def served_model_name(self) -> str:
        """The one name every worker serves and every client asks for (``srt_schema.served``)."""
        return served_model_name(self.recipe)

    def container(
        self, image: str | None = None, *, remap_root: bool = False
    ) -> ContainerSpec | None:
        if not self.pyxis:
            return None
        return ContainerSpec(
            image=image or self.recipe.model.container, mounts=self.mounts, remap_root=remap_root
        )

    def log_path(self, name: str) -> str:
        return f"{self.log_dir.rstrip('/')}/{name}"

    @property
    def scratch_dir(self) -> str:
        """The job's scratch (NATS JetStream's store, etcd's data, the tachometer's buffer) as
        its programs see it: ``<log dir>/scratch`` (``/logs/scratch`` in containers), in the
        job's own folder, never a predictable shared ``/tmp`` name. The runtime creates it
        private (0700) before anything starts and removes it at the end (``JobPlan.scratch``)."""
        return f"{self.in_log_dir.rstrip('/')}/{SCRATCH}"


#: The job's scratch folder, relative to its log folder (``JobPlan.scratch``).
SCRATCH = "scratch"


def addresses_for(nodes: tuple[str, ...], given: Mapping[str, str] | None) -> dict[str, str]:
    """Node -> address; nodes without one are addressed by name."""
    return {node: (given or {}).get(node, node) for node in nodes}
