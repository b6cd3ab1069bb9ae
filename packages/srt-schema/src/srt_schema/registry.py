"""The vocabularies a recipe may name, declared once: frontends, service kinds, benchmark types.

The planner and the runtime read the same tables, so a kind is never spelled in two places.
"""

from __future__ import annotations

from typing import Literal, get_args

import msgspec

from srt_schema.roles import EngineType

__all__ = [
    "ACCURACY_EVALS",
    "BENCHMARK_BOUNDS",
    "BENCHMARK_FIELDS",
    "BENCHMARK_SHARED_FIELDS",
    "BENCHMARK_TYPES",
    "FRONTENDS",
    "MOONCAKE_WORKLOADS",
    "ROUTER_BENCH_FRONTEND",
    "SA_BENCH_DATASETS",
    "SERVICE_KINDS",
    "SERVICE_PLACEMENTS",
    "SERVICE_STARTS",
    "AccuracyEval",
    "Bound",
    "FrontendFamily",
    "FrontendInfo",
    "SaBenchDataset",
    "ServiceKind",
    "ServicePlacement",
    "ServiceStart",
    "canonical_frontend",
    "is_local_tokenizer",
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

#: Per benchmark type, the fields it reads on top of the shared ones. The accuracy evals and
#: mooncake-router also read ``dataset_path``: their questions / trace come from a local file,
#: never downloaded at run time (docs/deviations.md).
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
    "router": frozenset({"isl", "osl", "num_requests", "concurrency", "prefix_ratios"}),
    "mooncake-router": frozenset(
        {"mooncake_workload", "ttft_threshold_ms", "itl_threshold_ms", "dataset_path"}
    ),
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

#: ``benchmark.dataset_name`` values sa-bench reads (unset means ``random``): synthetic prompts of
#: the model's tokenizer, or a JSON Lines file of prompts (``dataset_path``).
SaBenchDataset = Literal["random", "custom"]
SA_BENCH_DATASETS: tuple[SaBenchDataset, ...] = get_args(SaBenchDataset)

#: Accuracy evaluators; each reads its questions from a local JSON Lines file
#: (``benchmark.dataset_path``): nothing is downloaded at run time.
AccuracyEval = Literal["gsm8k", "mmlu", "gpqa", "longbenchv2"]
ACCURACY_EVALS: tuple[AccuracyEval, ...] = get_args(AccuracyEval)

#: ``benchmark.mooncake_workload`` values of the mooncake-router benchmark.
MOONCAKE_WORKLOADS: tuple[str, ...] = ("mooncake", "conversation", "synthetic", "toolagent")

#: The frontend the ``router`` benchmark and SGLang ``/slow_down`` (sa-bench's
#: ``slow_down_sleep_time`` / ``slow_down_wait_time``) need.
ROUTER_BENCH_FRONTEND = "sglang-router"


class Bound(msgspec.Struct, frozen=True, kw_only=True):
    """The inclusive range a numeric ``benchmark`` field accepts."""

    minimum: float
    maximum: float | None = None
    #: ``an integer`` or ``a number``, for messages.
    kind: str = "an integer"

    def allows(self, value: float) -> bool:
        return value >= self.minimum and (self.maximum is None or value <= self.maximum)

    def describe(self) -> str:
        low = f"{self.minimum:g}"
        if self.maximum is None:
            return f"{self.kind} >= {low}"
        return f"{self.kind} in [{low}, {self.maximum:g}]"


_COUNT = Bound(minimum=1)
_NON_NEGATIVE = Bound(minimum=0)

#: Lengths, counts and ratios of ``benchmark`` (a value outside its range is refused by validate
#: and, defensively, by srt-bench).
BENCHMARK_BOUNDS: dict[str, Bound] = {
    "isl": _COUNT,
    "osl": _COUNT,
    "max_tokens": _COUNT,
    "num_prompts_mult": _COUNT,
    "num_warmup_mult": _NON_NEGATIVE,
    "num_requests": _COUNT,
    "concurrency": _COUNT,
    "num_examples": _COUNT,
    "repeat": _COUNT,
    "num_threads": _COUNT,
    "max_context_length": _COUNT,
    "num_shots": _NON_NEGATIVE,
    "ttft_threshold_ms": _COUNT,
    "itl_threshold_ms": _COUNT,
    "random_range_ratio": Bound(minimum=0, maximum=1, kind="a number"),
    "temperature": Bound(minimum=0, kind="a number"),
}


def is_local_tokenizer(value: str) -> bool:
    """A ``benchmark.custom_tokenizer`` srt-bench can load: an absolute path to a folder holding
    ``tokenizer.json`` or to the file itself (a hub name or a tokenizer class is not)."""
    return value.startswith("/")
