"""The vocabularies a recipe may name, declared once: frontends, service kinds, benchmark types.

One table per vocabulary, read by the validator (``srt_schema.validate``), the planner
(``srt_planner.services``/``service_kinds``, ``frontends``, ``context``), migrate
(``srt_schema.migrate``) and the docs, so a kind is never spelled in two places:

- ``SERVICE_KINDS``: placement, start phase, criticality, ports, default readiness, options.
- ``FRONTENDS``: health-gate family, who serves the public port, what it launches, engines.
- ``BENCHMARK_FIELDS`` (+ ``BENCHMARK_SHARED_FIELDS``): the fields each benchmark type reads.

Engine capabilities are ``srt_schema.roles.ENGINE_CAPABILITIES``.
"""

from __future__ import annotations

import re
from typing import Literal, get_args

import msgspec

from srt_schema.roles import EngineType

__all__ = [
    "ACCURACY_EVALS",
    "AIPERF_FIELDS",
    "BENCHMARK_BOUNDS",
    "BENCHMARK_FIELDS",
    "BENCHMARK_SHARED_FIELDS",
    "BENCHMARK_TYPES",
    "FIELD_BOUNDS",
    "FRONTENDS",
    "MAX_GPUS",
    "MAX_GPUS_PER_NODE",
    "MAX_NODES",
    "MAX_TOKENS",
    "MOONCAKE_WORKLOADS",
    "PARALLEL_ARGS",
    "PARALLEL_ARG_BOUND",
    "ROUTER_BENCH_FRONTEND",
    "SA_BENCH_DATASETS",
    "SERVICE_KINDS",
    "SERVICE_PLACEMENTS",
    "SERVICE_STARTS",
    "AccuracyEval",
    "Bound",
    "FrontendFamily",
    "FrontendInfo",
    "FrontendServing",
    "SaBenchDataset",
    "ServiceKind",
    "ServicePhase",
    "ServicePlacement",
    "ServiceReadiness",
    "ServiceStart",
    "canonical_frontend",
    "is_direct",
    "is_local_tokenizer",
]

#: The health-gate family of a frontend: how the supervisor knows the deployment is ready.
#: ``dynamo``: count the instances of ``/health``; ``router``: count ``/workers`` stats;
#: ``direct``: ``/health`` then ``/v1/models``; ``trtllm_serve``: any 200; ``none``: no gate.
#: The plan's ``HealthGate.family`` is this value.
FrontendFamily = Literal["dynamo", "router", "direct", "trtllm_serve", "none"]
#: Who serves the public port: a frontend process (``router``), the aggregate worker itself
#: (``worker``), the worker when the deployment is aggregated and a frontend process when it is
#: disaggregated (``worker_if_agg``), or nothing (``none``).
FrontendServing = Literal["router", "worker", "worker_if_agg", "none"]


class FrontendInfo(msgspec.Struct, frozen=True, kw_only=True):
    """What a ``frontend.type`` is, what it launches and which engines it can front."""

    family: FrontendFamily
    serving: FrontendServing
    #: The program the frontend process runs (a Python module when ``module``); empty: none.
    program: str = ""
    module: bool = False
    #: Arguments that always follow the program (``smg launch``: the router without workers).
    subcommand: tuple[str, ...] = ()
    #: The PyPI distribution that installs ``program`` on a machine without GPUs, for the
    #: stand-in engine mode (``srtctl apply --stand-in-engines``); empty: none does, and a
    #: stand-in run of the frontend is refused (``not_installable`` says why).
    package: str = ""
    not_installable: str = ""
    #: Engines every role must run; empty = any engine.
    engines: tuple[EngineType, ...] = ()
    #: Another spelling of this frontend (``sgl-router`` is ``sglang-router``).
    alias_of: str | None = None


_SGLANG_ROUTER = FrontendInfo(
    family="router",
    serving="router",
    program="sglang_router.launch_router",
    module=True,
    package="sglang-router",
    engines=("sglang",),
)

FRONTENDS: dict[str, FrontendInfo] = {
    "dynamo": FrontendInfo(
        family="dynamo",
        serving="router",
        program="dynamo.frontend",
        module=True,
        package="ai-dynamo",
    ),
    "sglang-router": _SGLANG_ROUTER,
    "sgl-router": msgspec.structs.replace(_SGLANG_ROUTER, alias_of="sglang-router"),
    # SGLang Model Gateway: the engine-agnostic successor of sglang-router (SemiAnalysis fork).
    "smg": FrontendInfo(
        family="router",
        serving="router",
        program="smg",
        subcommand=("launch",),
        package="smg",
        engines=("sglang", "vllm", "trtllm"),
    ),
    "vllm-router": FrontendInfo(
        family="router",
        serving="router",
        program="vllm-router",
        package="vllm-router",
        engines=("vllm",),
    ),
    # Static routers without a ``/workers`` count: gated like a direct server.
    "atomesh": FrontendInfo(
        family="direct",
        serving="router",
        program="atomesh.router",
        module=True,
        not_installable="no PyPI distribution provides atomesh (it ships inside ATOM's containers)",
        engines=("atom",),
    ),
    "tilert-router": FrontendInfo(
        family="direct",
        serving="router",
        program="tilert.pd_vllm.router",
        module=True,
        not_installable=(
            "PyPI's tilert (0.1.3) has no tilert.pd_vllm.router (it ships inside TileRT's "
            "containers)"
        ),
        engines=("tilert", "vllm"),
    ),
    "sglang": FrontendInfo(family="direct", serving="worker", engines=("sglang",)),
    "vllm": FrontendInfo(family="direct", serving="worker", engines=("vllm",)),
    "trtllm_serve": FrontendInfo(
        family="trtllm_serve",
        serving="worker_if_agg",
        program="trtllm-serve",
        not_installable=(
            "trtllm-serve (the disaggregated server) comes with TensorRT-LLM, which installs "
            "only from NVIDIA's package index with CUDA"
        ),
        engines=("trtllm",),
    ),
    "none": FrontendInfo(family="none", serving="none"),
}


def is_direct(frontend: str, disaggregated: bool) -> bool:
    """The aggregate worker itself serves the public port (no frontend process)."""
    serving = FRONTENDS[frontend].serving
    return serving == "worker" or (serving == "worker_if_agg" and not disaggregated)


def canonical_frontend(name: str) -> str:
    info = FRONTENDS[name]
    return info.alias_of or name


ServicePlacement = Literal[
    "head", "infra", "dedicated", "prefill", "decode", "agg", "workers", "compute", "all"
]
SERVICE_PLACEMENTS: tuple[ServicePlacement, ...] = get_args(ServicePlacement)
ServiceStart = Literal["infra", "before_workers", "with_workers", "after_frontend"]
SERVICE_STARTS: tuple[ServiceStart, ...] = get_args(ServiceStart)


#: The phase a kind starts in when ``start`` is unset.
ServicePhase = Literal["infra", "before_workers", "after_frontend"]
#: How a kind is gated ready when it has no ``readiness`` block: a TCP connect to its first port,
#: an HTTP GET of ``readiness_path`` on its ``http`` port, its ready log marker, or not at all.
ServiceReadiness = Literal["tcp", "http", "log", "none"]


class ServiceKind(msgspec.Struct, frozen=True, kw_only=True):
    """Defaults and rules of one ``services[].type``: the validator, the planner and the docs
    read this one table."""

    placement: ServicePlacement
    start: ServicePhase
    critical: bool
    #: Infra-class kinds may take ``placement.node: dedicated`` and ``external``; they are the
    #: discovery plane (no discovery env of their own, stopped last).
    infra_class: bool = False
    #: Ports the kind binds, by name (empty: none of its own).
    ports: tuple[tuple[str, int], ...] = ()
    readiness: ServiceReadiness = "none"
    readiness_path: str = ""
    #: Default probe deadline in seconds (``readiness.timeout_seconds`` replaces it).
    readiness_timeout: int = 120
    #: The ``options`` keys the kind reads.
    options: tuple[str, ...] = ()
    #: The kind has a built-in command (``command`` is optional).
    has_command: bool = True

    def port(self, name: str) -> int:
        return dict(self.ports)[name]


SERVICE_KINDS: dict[str, ServiceKind] = {
    "generic": ServiceKind(
        placement="head", start="after_frontend", critical=False, has_command=False
    ),
    "etcd": ServiceKind(
        placement="infra",
        start="infra",
        critical=True,
        infra_class=True,
        ports=(("client", 2379), ("peer", 2380)),
        readiness="tcp",
        readiness_timeout=300,
    ),
    "nats": ServiceKind(
        placement="infra",
        start="infra",
        critical=True,
        infra_class=True,
        ports=(("client", 4222),),
        readiness="tcp",
        readiness_timeout=300,
        options=("max_payload_mb",),
    ),
    "mooncake-master": ServiceKind(
        placement="infra",
        start="before_workers",
        critical=True,
        infra_class=True,
        ports=(("rpc", 8700), ("http", 8701), ("metrics", 8702)),
        readiness="tcp",
        options=("store_config", "device_names_by_gpu"),
    ),
    # A standalone store (a memory donor of the master's pool) is one process where the spec's
    # default-placement rule puts every kind it does not name: the head node. Several stores, or
    # stores on the workers, are ``placement.node: workers``.
    "mooncake-store": ServiceKind(
        placement="head", start="before_workers", critical=True, has_command=False
    ),
    "ray": ServiceKind(
        placement="head",
        start="before_workers",
        critical=True,
        ports=(("gcs", 6379),),
        readiness="tcp",
    ),
    "gms": ServiceKind(placement="workers", start="before_workers", critical=True, readiness="log"),
    "lmcache-server": ServiceKind(
        placement="workers",
        start="before_workers",
        critical=True,
        ports=(("rpc", 8750), ("http", 8751)),
        readiness="http",
        readiness_path="/healthcheck",
    ),
    "dcgm-exporter": ServiceKind(
        placement="workers", start="after_frontend", critical=False, ports=(("metrics", 9401),)
    ),
    "node-exporter": ServiceKind(
        placement="workers", start="after_frontend", critical=False, ports=(("metrics", 9101),)
    ),
    "process-exporter": ServiceKind(
        placement="all", start="after_frontend", critical=False, ports=(("metrics", 9256),)
    ),
}

#: Fields every benchmark type accepts (docs/recipes.md#benchmark-rules).
BENCHMARK_SHARED_FIELDS: frozenset[str] = frozenset(
    {
        "type",
        "placement",
        "colocate_with_frontend",
        "stream_output",
        "concurrencies",
        "sweep",
    }
)

#: The fields of the types that drive the aiperf CLI (router, mooncake-router, trace-replay):
#: which aiperf runs and the flags added to each of its runs. Any other type refuses them, since
#: they would do nothing there (docs/deviations.md).
AIPERF_FIELDS: frozenset[str] = frozenset({"aiperf_package", "aiperf_args"})

#: Per benchmark type, the fields it reads on top of the shared ones. The accuracy evals and
#: mooncake-router also read ``dataset_path``: a local file of questions (else the eval fetches
#: its published dataset in the job) / the trace (never downloaded; docs/deviations.md).
BENCHMARK_FIELDS: dict[str, frozenset[str]] = {
    "sa-bench": frozenset(
        {
            "isl",
            "osl",
            "concurrencies",
            "req_rate",
            "random_range_ratio",
            "num_prompts_mult",
            "num_warmup_mult",
            "dataset_name",
            "dataset_path",
            "custom_tokenizer",
            "use_chat_template",
            "reuse_http_connections",
            "slow_down_sleep_time",
            "slow_down_wait_time",
            # extensions of this project (docs/schema-extensions.md)
            "capacity",
            "workload",
        }
    ),
    "sglang-bench": frozenset({"isl", "osl", "concurrencies", "req_rate"}),
    "gsm8k": frozenset(
        {
            "num_examples",
            "max_tokens",
            "repeat",
            "num_threads",
            "num_shots",
            "temperature",
            "top_p",
            "top_k",
            "dataset_path",
        }
    ),
    "mmlu": frozenset({"num_examples", "max_tokens", "repeat", "num_threads", "dataset_path"}),
    "gpqa": frozenset({"num_examples", "max_tokens", "repeat", "num_threads", "dataset_path"}),
    "longbenchv2": frozenset(
        {
            "num_examples",
            "max_tokens",
            "num_threads",
            "max_context_length",
            "categories",
            "dataset_path",
        }
    ),
    "router": frozenset({"isl", "osl", "num_requests", "concurrency", "prefix_ratios"})
    | AIPERF_FIELDS,
    "mooncake-router": frozenset(
        {"mooncake_workload", "ttft_threshold_ms", "itl_threshold_ms", "dataset_path"}
    )
    | AIPERF_FIELDS,
    "trace-replay": frozenset(
        {"concurrencies", "ttft_threshold_ms", "itl_threshold_ms", "trace_file"}
    )
    | AIPERF_FIELDS,
    "agentperf": frozenset(
        {
            "isl",
            "concurrencies",
            "concurrency",
            "agentperf_client_dir",
            "agentperf_config",
            "container_image",
            "env",
        }
    ),
    "custom": frozenset({"command", "container_image", "env"}),
    "lm-eval": frozenset(),
    "manual": frozenset(),
}

BENCHMARK_TYPES: tuple[str, ...] = tuple(sorted(BENCHMARK_FIELDS))

#: ``benchmark.dataset_name`` values sa-bench reads (unset means ``random``): synthetic prompts of
#: the model's tokenizer, or a JSON Lines file of prompts (``dataset_path``).
SaBenchDataset = Literal["random", "custom"]
SA_BENCH_DATASETS: tuple[SaBenchDataset, ...] = get_args(SaBenchDataset)

#: Accuracy evaluators; each reads its questions from ``benchmark.dataset_path``, else finds or
#: fetches its published dataset in the job (srt_bench.evals.sources).
AccuracyEval = Literal["gsm8k", "mmlu", "gpqa", "longbenchv2"]
ACCURACY_EVALS: tuple[AccuracyEval, ...] = get_args(AccuracyEval)

#: ``benchmark.mooncake_workload`` values of the mooncake-router benchmark.
MOONCAKE_WORKLOADS: tuple[str, ...] = ("mooncake", "conversation", "synthetic", "toolagent")

#: The frontend the ``router`` benchmark and SGLang ``/slow_down`` (sa-bench's
#: ``slow_down_sleep_time`` / ``slow_down_wait_time``) need.
ROUTER_BENCH_FRONTEND = "sglang-router"


class Bound(msgspec.Struct, frozen=True, kw_only=True):
    """The range a numeric field accepts (inclusive unless ``above``)."""

    minimum: float
    maximum: float | None = None
    #: ``an integer`` or ``a number``, for messages.
    kind: str = "an integer"
    #: The minimum itself is not allowed (``> 0`` for a duration in seconds).
    above: bool = False

    def allows(self, value: float) -> bool:
        low_ok = value > self.minimum if self.above else value >= self.minimum
        return low_ok and (self.maximum is None or value <= self.maximum)

    def describe(self) -> str:
        low = _number(self.minimum)
        if self.maximum is None:
            return f"{self.kind} {'>' if self.above else '>='} {low}"
        return f"{self.kind} in {'(' if self.above else '['}{low}, {_number(self.maximum)}]"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


#: The largest allocation a recipe may describe; a bigger number is a typo, never planned.
MAX_NODES = 4096
MAX_GPUS_PER_NODE = 64
MAX_GPUS = MAX_NODES * MAX_GPUS_PER_NODE
#: The longest prompt, output or context a benchmark field may name, in tokens.
MAX_TOKENS = 10_000_000
_DAY = 86_400
_WEEK = 7 * _DAY


def _count(maximum: float, minimum: float = 1) -> Bound:
    return Bound(minimum=minimum, maximum=maximum)


def _seconds(maximum: float, *, integer: bool = False) -> Bound:
    """A duration that must be positive."""
    if integer:
        return Bound(minimum=1, maximum=maximum)
    return Bound(minimum=0, maximum=maximum, kind="a number", above=True)


_PORT = _count(65535)
_RATIO = Bound(minimum=0, maximum=1, kind="a number")
#: A latency limit in milliseconds (a capacity target): positive, at most an hour.
_LATENCY_MS = Bound(minimum=0, maximum=3_600_000, kind="a number", above=True)
#: A request rate in requests/s (a capacity search's rate axis): positive, at most a million.
_RATE = Bound(minimum=0, maximum=1_000_000, kind="a number", above=True)

#: The range of every count, size, port, length, duration and interval of the recipe and the
#: cluster config, by ``(JSON Schema $defs name, field)``; ``$root`` is the top level of
#: ``srtslurm.yaml``. The structural check refuses a value outside it (with the range in the
#: message) before anything is planned or divided by it.
FIELD_BOUNDS: dict[tuple[str, str], Bound] = {
    # allocation
    ("ResourceConfig", "gpus_per_node"): _count(MAX_GPUS_PER_NODE),
    ("$root", "gpus_per_node"): _count(MAX_GPUS_PER_NODE),
    # 0: the v1 spelling of decode `colocate` (other roles need >= 1: roles_rules)
    ("RoleConfig", "nodes"): _count(MAX_NODES, minimum=0),
    ("RoleConfig", "workers"): _count(MAX_GPUS, minimum=0),
    ("RoleConfig", "gpus"): _count(MAX_GPUS),
    ("ServiceConfig", "nodes"): _count(MAX_NODES),
    ("ServiceConfig", "cpus_per_task"): _count(4096),
    ("FrontendConfig", "num_additional_frontends"): _count(1024, minimum=0),
    ("TRTLLMBackend", "sequential_node_start"): _count(MAX_NODES, minimum=0),
    ("VLLMFailoverConfig", "shadow_engines"): _count(MAX_GPUS, minimum=0),
    ("MockerBackend", "data_parallel_size"): _count(MAX_GPUS),
    ("MockerBackend", "num_workers"): _count(MAX_GPUS),
    ("MockerBackend", "num_gpu_blocks_override"): _count(2**31 - 1),
    ("MockerBackend", "max_num_seqs"): _count(1_000_000),
    ("MockerBackend", "max_num_batched_tokens"): _count(MAX_TOKENS),
    ("MockerBackend", "block_size"): _count(65_536),
    ("MockerBackend", "speedup_ratio"): Bound(minimum=0, maximum=1e6, kind="a number", above=True),
    ("MockerBackend", "decode_speedup_ratio"): Bound(
        minimum=0, maximum=1e6, kind="a number", above=True
    ),
    ("MockerBackend", "startup_time"): Bound(minimum=0, maximum=_DAY, kind="a number"),
    ("MockerBackend", "kv_transfer_bandwidth"): Bound(minimum=0, kind="a number", above=True),
    # ports and HTTP
    ("CpuPowerExporterConfig", "port"): _PORT,
    ("DynamoConfig", "sidecar_port"): _PORT,
    ("HttpProbe", "port"): _PORT,
    ("TcpProbe", "port"): _PORT,
    ("ServiceMetricsConfig", "port"): _PORT,
    ("ServiceReadinessConfig", "port"): _PORT,
    ("TelemetryExporterConfig", "port"): _PORT,
    ("HttpProbe", "status"): _count(599, minimum=100),
    # durations (seconds unless the name says ms)
    ("HostSetupConfig", "timeout_seconds"): _seconds(_WEEK, integer=True),
    ("ServiceReadinessConfig", "timeout_seconds"): _seconds(_WEEK, integer=True),
    ("ServiceConfig", "build_timeout_seconds"): _seconds(_WEEK, integer=True),
    ("DynamoConfig", "sidecar_startup_timeout"): _seconds(_WEEK, integer=True),
    ("NsysObservabilityConfig", "report_timeout_secs"): _seconds(_WEEK, integer=True),
    ("TelemetryConfig", "startup_timeout_seconds"): _seconds(_DAY),
    ("TelemetryConfig", "request_timeout_seconds"): _seconds(3600),
    ("TelemetryConfig", "collector_join_timeout_seconds"): _seconds(_DAY),
    ("CpuPowerConfig", "startup_timeout_seconds"): _seconds(_DAY),
    ("TachometerConfig", "shutdown_grace_secs"): Bound(minimum=0, maximum=_DAY, kind="a number"),
    ("ProfilingConfig", "delay_secs"): _count(_DAY, minimum=0),
    ("ProfilingConfig", "duration_secs"): _seconds(_DAY, integer=True),
    ("ProfilingConfig", "benchmark_duration_secs"): _seconds(_WEEK, integer=True),
    # intervals and attempts
    ("HealthCheckConfig", "max_attempts"): _count(1_000_000),
    ("HealthCheckConfig", "interval_seconds"): _seconds(3600, integer=True),
    ("ServiceReadinessConfig", "interval_seconds"): _seconds(3600, integer=True),
    ("TelemetryConfig", "collect_interval_ms"): _count(3_600_000),
    ("TachometerConfig", "collect_interval_ms"): _count(3_600_000),
    ("TachometerConfig", "sync_interval_secs"): _seconds(_DAY, integer=True),
    ("TachometerConfig", "compaction_threads"): _count(1024),
    ("CpuPowerConfig", "sample_interval_seconds"): _seconds(3600),
    ("ReportingStatusConfig", "logging-stream-interval"): _seconds(_DAY),
    ("AIAnalysisConfig", "pr_search_days"): _count(3650),
    # restarts
    ("RestartPolicy", "max_restarts"): _count(1000, minimum=0),
    ("RestartPolicy", "backoff_seconds"): Bound(minimum=0, maximum=_DAY, kind="a number"),
    ("RestartPolicy", "max_backoff_seconds"): Bound(minimum=0, maximum=_DAY, kind="a number"),
    # profiling selection
    ("ProfilingPhaseConfig", "start_step"): _count(10**9, minimum=0),
    ("ProfilingPhaseConfig", "stop_step"): _count(10**9, minimum=0),
    ("ProfilingPhaseConfig", "worker_index"): _count(MAX_GPUS, minimum=0),
    ("ProfilingPhaseConfig", "worker_rank"): _count(MAX_GPUS, minimum=0),
    ("DynamoConfig", "sidecar_context_length"): _count(MAX_TOKENS),
    # benchmark lengths, counts and ratios (also checked, defensively, by srt-bench)
    ("BenchmarkConfig", "isl"): _count(MAX_TOKENS),
    ("BenchmarkConfig", "osl"): _count(MAX_TOKENS),
    ("BenchmarkConfig", "max_tokens"): _count(MAX_TOKENS),
    ("BenchmarkConfig", "max_context_length"): _count(MAX_TOKENS),
    ("BenchmarkConfig", "num_prompts_mult"): _count(10_000),
    ("BenchmarkConfig", "num_warmup_mult"): _count(10_000, minimum=0),
    ("BenchmarkConfig", "num_requests"): _count(10_000_000),
    ("BenchmarkConfig", "concurrency"): _count(1_000_000),
    ("BenchmarkConfig", "num_examples"): _count(10_000_000),
    ("BenchmarkConfig", "repeat"): _count(10_000),
    ("BenchmarkConfig", "num_threads"): _count(10_000),
    ("BenchmarkConfig", "num_shots"): _count(1000, minimum=0),
    ("BenchmarkConfig", "ttft_threshold_ms"): _count(3_600_000),
    ("BenchmarkConfig", "itl_threshold_ms"): _count(3_600_000),
    ("BenchmarkConfig", "random_range_ratio"): _RATIO,
    ("BenchmarkConfig", "temperature"): Bound(minimum=0, maximum=100, kind="a number"),
    ("BenchmarkConfig", "top_p"): _RATIO,
    # capacity search and workloads (extensions of this project, docs/schema-extensions.md)
    ("CapacitySearchConfig", "min_concurrency"): _count(1_000_000),
    ("CapacitySearchConfig", "max_concurrency"): _count(1_000_000),
    ("CapacitySearchConfig", "min_request_rate"): _RATE,
    ("CapacitySearchConfig", "max_request_rate"): _RATE,
    ("CapacitySearchConfig", "request_rate_step"): _RATE,
    ("CapacitySearchConfig", "seconds_per_point"): _seconds(_DAY),
    ("CapacitySearchConfig", "max_points"): _count(100, minimum=2),
    ("CapacitySearchConfig", "tolerance"): Bound(minimum=0, maximum=1, kind="a number", above=True),
    ("CapacitySearchConfig", "max_step"): Bound(
        minimum=1, maximum=1000, kind="a number", above=True
    ),
    **{
        ("CapacityTargets", f"{metric}_p{p}_ms"): _LATENCY_MS
        for metric in ("ttft", "tpot", "itl", "e2el")
        for p in (50, 90, 99)
    },
    ("MultiTurnWorkload", "turns"): _count(10_000),
    ("MultiTurnWorkload", "think_time_s"): Bound(minimum=0, maximum=_DAY, kind="a number"),
    ("MultiTurnWorkload", "think_time_jitter"): _RATIO,
    ("MultiTurnWorkload", "conversations"): _count(10_000_000),
    ("MultiTurnWorkload", "kv_block_tokens"): _count(65_536),
    ("SharedPrefixWorkload", "groups"): _count(1_000_000),
    ("SharedPrefixWorkload", "prefix_tokens"): _count(MAX_TOKENS),
    ("SharedPrefixWorkload", "suffix_tokens"): _count(MAX_TOKENS),
    ("SharedPrefixWorkload", "prefix_ratio"): _RATIO,
    ("SharedPrefixWorkload", "kv_block_tokens"): _count(65_536),
    ("TraceReplayWorkload", "speedup"): Bound(minimum=0, maximum=1e6, kind="a number", above=True),
    ("TraceReplayWorkload", "max_requests"): _count(100_000_000),
    ("TraceReplayWorkload", "block_tokens"): _count(65_536),
}

#: Engine args (``roles.*.args``, either spelling: ``-`` or ``_``) that are GPU counts: the
#: planner computes with the vLLM ones (replica size, data-parallel instances, GPUs per rank)
#: and the builders pass the others to the engine as sizes. Each must be a positive integer or
#: its digits as text, within PARALLEL_ARG_BOUND.
PARALLEL_ARGS: frozenset[str] = frozenset(
    {
        # vLLM (srt_planner.engines.vllm.replica_size / data_parallel)
        "tensor-parallel-size",
        "pipeline-parallel-size",
        "data-parallel-size",
        # SGLang
        "tp",
        "tp-size",
        "dp",
        "dp-size",
        "pp-size",
        "ep-size",
        # TensorRT-LLM (trtllm-serve flags)
        "moe-expert-parallel-size",
    }
)
PARALLEL_ARG_BOUND = _count(MAX_GPUS)

#: The ``benchmark`` rows of FIELD_BOUNDS by field name (srt-bench's defensive check).
BENCHMARK_BOUNDS: dict[str, Bound] = {
    field: bound for (owner, field), bound in FIELD_BOUNDS.items() if owner == "BenchmarkConfig"
}


def is_local_tokenizer(value: str) -> bool:
    """A ``benchmark.custom_tokenizer`` srt-bench reads from disk: an absolute path to a folder
    holding ``tokenizer.json`` or to the file itself."""
    return value.startswith("/")


_CLASS_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")


def is_tokenizer_class(value: str) -> bool:
    """A ``benchmark.custom_tokenizer`` naming a tokenizer class, ``module.ClassName``: srt-bench
    imports the module and calls ``ClassName.from_pretrained(<model folder>)`` (the sa-bench
    client's interface, packages/srt-bench/README.md#custom-tokenizer-classes)."""
    return bool(_CLASS_PATH.match(value))
