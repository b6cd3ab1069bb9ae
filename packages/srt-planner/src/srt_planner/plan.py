"""The JobPlan: every process a job will ever start, as plain data.

This module is the contract between the planner (which builds a JobPlan as a pure function of the
recipe, the cluster config and the allocation) and the runtime (which executes it through a
launcher and invents nothing that is not here). It serialises to ``plan.json`` with msgspec.

Paths: ``log_file`` and ``GeneratedFile.path`` are relative to the job's log directory
(``<output>/<job_id>/logs``) unless absolute; the runtime resolves them.
"""

from __future__ import annotations

from typing import Literal, get_args

import msgspec

from srt_schema.recipe import IdentityConfig, ReportingConfig
from srt_schema.registry import FrontendFamily

__all__ = [
    "START_PHASES",
    "AllocationRequest",
    "ContainerSpec",
    "FinalizeStep",
    "GeneratedFile",
    "HealthGate",
    "HetComponent",
    "HttpProbe",
    "JobPlan",
    "LogProbe",
    "Mount",
    "NodeRoles",
    "ProcessKind",
    "ProcessSpec",
    "ProfileSpec",
    "Readiness",
    "RestartSpec",
    "RunSummary",
    "StandIn",
    "StartPhase",
    "TcpProbe",
]


class _Struct(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, gc=False):
    """Base of every plan struct (plain data, never cyclic: not tracked by the cycle collector)."""


ProcessKind = Literal["service", "worker", "frontend", "proxy", "telemetry", "benchmark"]

#: The order the supervisor starts things in (docs/design.md#supervisor-stages).
StartPhase = Literal[
    "host_setup",
    "infra",
    "before_workers",
    #: One-shot model staging steps (``model.stage_dir``, srt_planner.staging).
    "model_staging",
    "workers",
    "frontends",
    "after_frontend",
    "telemetry",
    "benchmark",
    "post_eval",
]
#: The phases in start order.
START_PHASES: tuple[StartPhase, ...] = get_args(StartPhase)


class TcpProbe(_Struct, frozen=True, kw_only=True, tag="tcp"):
    """Ready when ``host:port`` accepts a TCP connection."""

    host: str
    port: int
    timeout_seconds: float
    interval_seconds: float


class HttpProbe(_Struct, frozen=True, kw_only=True, tag="http"):
    """Ready when ``GET http://host:port/path`` answers ``status``."""

    host: str
    port: int
    path: str = "/health"
    status: int = 200
    timeout_seconds: float
    interval_seconds: float


class LogProbe(_Struct, frozen=True, kw_only=True, tag="log"):
    """Ready when the process's log matches the regular expression ``pattern``."""

    pattern: str
    timeout_seconds: float
    interval_seconds: float


Readiness = TcpProbe | HttpProbe | LogProbe


class RestartSpec(_Struct, frozen=True, kw_only=True):
    """Restart policy of one process (roles.<r>.restart, resolved)."""

    policy: Literal["never", "on-failure", "always"] = "never"
    max_restarts: int = 3
    backoff_seconds: float = 10.0
    max_backoff_seconds: float = 300.0


class Mount(_Struct, frozen=True, kw_only=True):
    """One container mount; ``source`` says where it came from (dry-run shows it)."""

    host: str
    container: str
    readonly: bool = False
    source: Literal["built-in", "cluster", "recipe"]


class ContainerSpec(_Struct, frozen=True, kw_only=True):
    """The container a step runs in (container runtime ``pyxis`` only)."""

    image: str
    mounts: tuple[Mount, ...] = ()
    remap_root: bool = False


class ProfileSpec(_Struct, frozen=True, kw_only=True):
    """Profiling of one worker process (``profiling.type``), with its step window."""

    #: ``nsys-auto``: automatic Nsight capture (``observability.nsys``), no ``profiling``.
    type: Literal["nsys", "nsys-time", "torch", "nsys-auto"]
    start_step: int | None = None
    stop_step: int | None = None
    #: Where the capture is written, as the program sees it.
    output_dir: str
    #: The Nsight report the process's wrapper writes (``-o``, relative to the log folder); the
    #: ``profiles`` finalize step checks it exists once the process stopped.
    nsys_report: str | None = None


class ProcessSpec(_Struct, frozen=True, kw_only=True):
    """One launch: an srun step on the Slurm launcher, a subprocess on the local launcher."""

    #: Unique within the plan; also the srun step name (``prefill_0_node-01``, ``service_etcd``).
    name: str
    kind: ProcessKind
    #: Worker role (``prefill``/``decode``/``agg``), service name, frontend family...
    role: str
    #: Index of the worker / instance within its role.
    index: int = 0
    #: Nodes the step spans (first = leader); one entry except for MPI endpoints.
    nodes: tuple[str, ...]
    #: GPU indices used on each node (same on every node of the step).
    gpus: tuple[int, ...] = ()
    #: Named ports the process binds (``http``, ``sys``, ``bootstrap``, ``nccl``...).
    ports: dict[str, int] = {}
    #: The complete environment the program gets on top of the launcher's, precedence applied.
    env: dict[str, str] = {}
    #: The program and its arguments (what runs inside the container or on the host).
    argv: tuple[str, ...]
    #: The full srun command the Slurm launcher runs (empty for the local launcher).
    srun_argv: tuple[str, ...] = ()
    container: ContainerSpec | None = None
    #: Log file, relative to the job's log directory.
    log_file: str
    phase: StartPhase
    #: Position within the phase (lower starts first; equal values may start together).
    order: int = 0
    readiness: Readiness | None = None
    #: A critical process exiting (non-zero) or printing a fatal marker aborts the job.
    critical: bool = True
    restart: RestartSpec = msgspec.field(default_factory=RestartSpec)
    #: Regular expressions that mean the process is dead even though it still runs.
    fatal_log_patterns: tuple[str, ...] = ()
    #: The job ends when every terminal process has exited (services with ``terminal: true``).
    terminal: bool = False
    #: Seconds to wait after SIGTERM before escalating, during cleanup.
    stop_grace_seconds: float = 10.0
    #: Cleanup tier: 0 stops first (benchmark, frontends, workers), 2 last (etcd, NATS).
    stop_tier: int = 0
    #: Why an implied service exists (``frontend.type dynamo``), for dry-run.
    implied_by: str | None = None
    het_group: int | None = None
    #: Shell snippets run (joined with ``&&``) before ``exec argv``: setup script, Dynamo install,
    #: per-node GPU masks of MPI endpoints. Already inside ``srun_argv``; a launcher that starts
    #: ``argv`` directly must run them through ``bash -c`` first when non-empty.
    preamble: tuple[str, ...] = ()
    #: Variables removed from the inherited environment (after ``env`` is applied).
    env_unset: tuple[str, ...] = ()
    #: Per-node GPU indices when they differ between the nodes of one step (packed MPI endpoints).
    node_gpus: dict[str, tuple[int, ...]] = {}
    profile: ProfileSpec | None = None
    #: Run-to-completion step (host_setup, model staging, a setup task): the stage waits for it to
    #: exit and a non-zero exit fails the stage unless ``critical`` is false (then it only warns).
    #: Processes of the ``host_setup``, ``benchmark`` and ``post_eval`` phases are always waited.
    oneshot: bool = False
    #: Run-to-completion steps are killed after this many seconds (None = no limit).
    timeout_seconds: float | None = None
    #: Engine number of a worker process: 0 serves; k >= 1 is vLLM shadow engine k
    #: (``engine.failover``), a standby that takes over when the serving engine dies. The
    #: restart unit is (role, index, engine): a shadow restarts on its own, and the health gate
    #: does not count shadows.
    engine: int = 0
    #: Name of the engine-0 worker process whose GPUs this process uses as well (shadow engines
    #: map the weights of their worker's GPU Memory Service). Only such a process may share GPUs.
    shares_gpus_with: str | None = None
    #: Stand-in engine mode: the argv of the engine this process stands in for (empty: the
    #: process runs as the recipe says).
    stand_in_for: tuple[str, ...] = ()


class FinalizeStep(_Struct, frozen=True, kw_only=True):
    """A step the supervisor runs itself on the head node after the benchmark, also when the run
    failed or was cancelled (docs/design.md#finalize): power telemetry's verdict and energy.

    Not an ``srun`` step: a cancelled job can start no new steps, so the supervisor runs ``argv``
    as its own subprocess (its interpreter's ``bin/`` first on PATH), after stopping the processes
    named in ``stop_first`` and before the rest of the cleanup. The flags the run's outcome adds
    are data here, so ``dry-run`` shows exactly what can be passed.
    """

    name: str
    argv: tuple[str, ...]
    #: Relative to the log directory.
    log_file: str
    #: Processes stopped (SIGTERM, their ``stop_grace_seconds``) before this step runs.
    stop_first: tuple[str, ...] = ()
    #: Processes whose exit before the cleanup (a crash, not our stop) adds ``exited_args``;
    #: ``{name}`` in them is replaced by the process name, once per exited process.
    exited_watch: tuple[str, ...] = ()
    exited_args: tuple[str, ...] = ()
    #: Added when the run was aborted (a failure, a cancel, the time limit).
    interrupted_args: tuple[str, ...] = ()
    #: Added when the benchmark was still running and had to be stopped for this step.
    reap_forced_args: tuple[str, ...] = ()
    #: A non-zero exit fails the job (its exit code only ever goes 0 -> 1).
    fails_job: bool = False
    timeout_seconds: float = 120.0


class StandIn(_Struct, frozen=True, kw_only=True):
    """The stand-in engine mode of a plan (``srtctl apply --stand-in-engines``,
    ``srt_planner.stand_in``): the stand-in model folder, as the programs see it."""

    model: str


class GeneratedFile(_Struct, frozen=True, kw_only=True):
    """A file the plan needs written before launch (nginx.conf, engine YAML, bench config...)."""

    path: str
    content: str
    mode: int = 0o644


class NodeRoles(_Struct, frozen=True, kw_only=True):
    """Which node plays which part (docs/planner.md#node-roles, #carving)."""

    head: str
    infra: str
    bench: str
    workers: tuple[str, ...] = ()
    pools: dict[str, tuple[str, ...]] = {}


class HealthGate(_Struct, frozen=True, kw_only=True):
    """How the supervisor decides the deployment is ready (docs/planner.md#health-gate)."""

    #: The frontend's health-gate family (``srt_schema.registry.FRONTENDS[...].family``).
    family: FrontendFamily
    url: str
    expected_prefill: int = 0
    expected_decode: int = 0
    #: The served model name ``/v1/models`` must list (where the family checks models; empty:
    #: any model).
    model: str = ""
    #: Total deadline = max_attempts x interval_seconds.
    max_attempts: int = 180
    interval_seconds: float = 10.0


class HetComponent(_Struct, frozen=True, kw_only=True):
    """One component of a heterogeneous job (``#SBATCH hetjob``)."""

    nodes: int
    segment: int


class AllocationRequest(_Struct, frozen=True, kw_only=True):
    """What the job asks Slurm for (plan_allocation), rendered into ``#SBATCH`` lines."""

    job_name: str
    nodes: int
    ntasks: int
    ntasks_per_node: int
    gpus_per_node: int | None
    segment: int | None
    exclusive: bool
    account: str
    partition: str
    time_limit: str
    #: Merged directives (cluster defaults under the recipe's), sorted by key.
    directives: dict[str, str] = {}
    het: tuple[HetComponent, ...] = ()


class RunSummary(_Struct, frozen=True, kw_only=True):
    """What the recipe says about the run that status reports describe (model, GPUs, worker
    counts, benchmark, engine and frontend types), resolved at planning so the runtime reads it
    from the plan (docs/telemetry-and-bench.md#status-api)."""

    model_path: str
    precision: str
    gpu_type: str | None = None
    gpus_per_node: int
    #: ``<role>_workers`` -> workers, for the roles ``prefill``, ``decode`` and ``agg``.
    workers: dict[str, int] = {}
    benchmark_type: str
    #: The serving engine's ``type`` (``vllm``, ``sglang``...).
    backend_type: str
    frontend_type: str


class JobPlan(_Struct, frozen=True, kw_only=True):
    """Everything the runtime needs to run one job."""

    plan_version: int = 1
    job_id: str
    job_name: str
    #: The allocation's nodes in Slurm order.
    nodes: tuple[str, ...]
    node_roles: NodeRoles
    container_runtime: Literal["pyxis", "none"]
    launcher: Literal["slurm", "local"]
    processes: tuple[ProcessSpec, ...]
    files: tuple[GeneratedFile, ...] = ()
    health: HealthGate
    #: The URL the benchmark and the user talk to (nginx or the frontend or the direct server).
    frontend_url: str
    served_model_name: str
    #: Path (relative to the log dir) of the srt-bench config file among ``files``, if any.
    benchmark_config: str | None = None
    #: The job serves until it is cancelled (``srtctl cancel``, SIGTERM) or its time limit: no
    #: benchmark and no eval are planned; after the health gate the runtime supervises every
    #: worker and frontend until stopped. True for ``srtctl apply --serve-only`` and for
    #: ``benchmark.type: manual`` (unless EVAL_ONLY). Terminal services still end the job.
    serve_only: bool = False
    #: EVAL_ONLY: no benchmark; the ``post_eval`` process runs after the health gate and its exit
    #: code is the job's. Otherwise a ``post_eval`` process (RUN_EVAL) runs after a benchmark
    #: that exited 0 and its failure only warns.
    eval_only: bool = False
    #: ``benchmark.stream_output``: every line of the benchmark processes' logs is mirrored into
    #: the supervisor's output (stdout and the sweep log) while they run.
    stream_benchmark_output: bool = False
    #: What the recipe's ``identity`` declares, checked against the first worker fingerprint
    #: after the health gate (None: nothing declared, no check).
    identity: IdentityConfig | None = None
    #: Where (relative to the log dir) the runtime writes srt_runtime's fingerprint capture script
    #: before anything starts; worker preambles run it (None: no worker captures).
    fingerprint_script: str | None = None
    #: Host teardown steps (``host_setup.teardown``), run during cleanup only if host_setup ran;
    #: their failures are logged and never change the exit code.
    teardown: tuple[ProcessSpec, ...] = ()
    #: Run after the benchmark (and on failure or cancel), before the cleanup, in order.
    finalize: tuple[FinalizeStep, ...] = ()
    #: The effective ``reporting`` block (the recipe's, else ``srtslurm.yaml``'s default): status
    #: endpoints, token variable names, log streaming, S3 upload, AI analysis. ``plan.json``
    #: holds each secret field as its srt_schema.secrets marker; the runtime takes the value from
    #: the variable the marker names (srtctl hands it over in the job's environment).
    reporting: ReportingConfig | None = None
    #: ``srtslurm.yaml``'s ``cluster`` name, sent with status reports (None: unnamed).
    cluster: str | None = None
    #: The recipe facts status reports describe (None: a hand-built plan; reports omit them).
    summary: RunSummary | None = None
    #: Set when the GPU engines are replaced by stand-ins (processes carry ``stand_in_for``).
    stand_in: StandIn | None = None
    #: The local launcher's time limit (``slurm.time_limit``, else ``default_time_limit``, else
    #: sbatch's default): the run stops there as Slurm would stop the job, status ``timeout``.
    #: None under Slurm (Slurm enforces it) and for ``UNLIMITED``.
    time_limit_seconds: int | None = None
    #: The limit as the recipe wrote it, for the log and the stop message.
    time_limit: str | None = None
    #: ``srtctl validate``/``dry-run``/``apply`` checked every engine and router flag against the
    #: catalog of the version that runs it (``checked``), or the user passed
    #: ``--skip-flag-check`` (``skipped``); unset when planned without the CLI (docs/flag-check.md).
    flag_check: Literal["checked", "skipped"] | None = None
    #: The job's scratch folder, relative to the log dir (services' stores, the tachometer's
    #: buffer): the runtime creates it private (0700) before anything starts, refusing a path
    #: that is not a folder of its own, and removes it after the cleanup.
    scratch: str | None = None
