"""The vocabularies a recipe may name, declared once: frontends, service kinds, benchmark types.

The planner and the runtime read the same tables, so a kind is never spelled in two places.
"""

from __future__ import annotations

from typing import Literal, get_args

import msgspec

from srt_schema.roles import EngineType

__all__ = [
    "BENCHMARK_FIELDS",
    "BENCHMARK_SHARED_FIELDS",
    "BENCHMARK_TYPES",
    "FRONTENDS",
    "SERVICE_KINDS",
    "SERVICE_PLACEMENTS",
    "SERVICE_STARTS",
    "FrontendFamily",
    "FrontendInfo",
    "ServiceKind",
    "ServicePlacement",
    "ServiceStart",
    "canonical_frontend",
]

FrontendFamily = Literal["dynamo", "router", "direct", "none"]


class FrontendInfo(msgspec.Struct, frozen=True, kw_only=True):
    """What a ``frontend.type`` is and which engines it can front."""

    family: FrontendFamily
    #: Engines every role must run; empty = any engine.
    engines: tuple[EngineType, ...] = ()
    #: Another spelling of this frontend (``sgl-router`` is ``sglang-router``).
    alias_of: str | None = None


FRONTENDS: dict[str, FrontendInfo] = {
    "dynamo": FrontendInfo(family="dynamo"),
    "sglang-router": FrontendInfo(family="router", engines=("sglang",)),
    "sgl-router": FrontendInfo(family="router", engines=("sglang",), alias_of="sglang-router"),
    # SGLang Model Gateway: the engine-agnostic successor of sglang-router (SemiAnalysis fork).
    "smg": FrontendInfo(family="router", engines=("sglang", "vllm", "trtllm")),
    "vllm-router": FrontendInfo(family="router", engines=("vllm",)),
    "atomesh": FrontendInfo(family="router", engines=("atom",)),
    "tilert-router": FrontendInfo(family="router", engines=("tilert", "vllm")),
    "sglang": FrontendInfo(family="direct", engines=("sglang",)),
    "vllm": FrontendInfo(family="direct", engines=("vllm",)),
    "trtllm_serve": FrontendInfo(family="direct", engines=("trtllm",)),
    "none": FrontendInfo(family="none"),
}


def canonical_frontend(name: str) -> str:
    info = FRONTENDS[name]
    return info.alias_of or name


ServicePlacement = Literal[
    "head", "infra", "dedicated", "prefill", "decode", "agg", "workers", "compute", "all"
]
SERVICE_PLACEMENTS: tuple[ServicePlacement, ...] = get_args(ServicePlacement)
ServiceStart = Literal["infra", "before_workers", "with_workers", "after_frontend"]
SERVICE_STARTS: tuple[ServiceStart, ...] = get_args(ServiceStart)


class ServiceKind(msgspec.Struct, frozen=True, kw_only=True):
    """Defaults and rules of one ``services[].type``."""

    placement: ServicePlacement
    start: ServiceStart
    critical: bool
    #: Infra-class kinds may take ``placement.node: dedicated`` and ``external``.
    infra_class: bool = False
    #: Ports the kind binds and gates readiness on (empty: no default probe).
    ports: tuple[int, ...] = ()
    #: The ``options`` keys the kind reads.
    options: tuple[str, ...] = ()
    #: The kind has a built-in command (``command`` is optional).
    has_command: bool = True


SERVICE_KINDS: dict[str, ServiceKind] = {
    "generic": ServiceKind(
        placement="head", start="after_frontend", critical=False, has_command=False
    ),
    "etcd": ServiceKind(
        placement="infra", start="infra", critical=True, infra_class=True, ports=(2379,)
    ),
    "nats": ServiceKind(
        placement="infra",
        start="infra",
        critical=True,
        infra_class=True,
        ports=(4222,),
        options=("max_payload_mb",),
    ),
    "mooncake-master": ServiceKind(
        placement="infra",
        start="before_workers",
        critical=True,
        infra_class=True,
        ports=(8700, 8701, 8702),
        options=("store_config", "device_names_by_gpu"),
    ),
    "mooncake-store": ServiceKind(placement="head", start="before_workers", critical=True),
    "ray": ServiceKind(placement="head", start="before_workers", critical=True),
    "gms": ServiceKind(placement="workers", start="before_workers", critical=True),
    "lmcache-server": ServiceKind(
        placement="workers", start="before_workers", critical=True, ports=(8750,)
    ),
    "dcgm-exporter": ServiceKind(
        placement="workers", start="after_frontend", critical=False, ports=(9401,)
    ),
    "node-exporter": ServiceKind(
        placement="workers", start="after_frontend", critical=False, ports=(9101,)
    ),
    "process-exporter": ServiceKind(
        placement="all", start="after_frontend", critical=False, ports=(9256,)
    ),
}

#: Fields every benchmark type accepts (cli-and-config.md §3.11.8).
BENCHMARK_SHARED_FIELDS: frozenset[str] = frozenset(
    {
        "type",
        "placement",
        "colocate_with_frontend",
        "stream_output",
        "aiperf_package",
        "aiperf_args",
        "concurrencies",
        "sweep",
    }
)

#: Per benchmark type, the fields it reads on top of the shared ones.
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
        }
    ),
    "mmlu": frozenset({"num_examples", "max_tokens", "repeat", "num_threads"}),
    "gpqa": frozenset({"num_examples", "max_tokens", "repeat", "num_threads"}),
    "longbenchv2": frozenset(
        {"num_examples", "max_tokens", "num_threads", "max_context_length", "categories"}
    ),
    "router": frozenset({"isl", "osl", "num_requests", "concurrency", "prefix_ratios"}),
    "mooncake-router": frozenset({"mooncake_workload", "ttft_threshold_ms", "itl_threshold_ms"}),
    "trace-replay": frozenset(
        {"concurrencies", "ttft_threshold_ms", "itl_threshold_ms", "trace_file"}
    ),
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
