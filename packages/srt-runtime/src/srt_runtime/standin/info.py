"""What an engine says about itself: model list, model and server info, load, version. Pure.

The shapes are the engines' own (SGLang 0.5 ``/get_server_info`` is its server arguments plus
``internal_states`` and ``version``), holding only what a router or client reads; the
stand-in is one data-parallel rank with one GPU's worth of nothing.
"""

from __future__ import annotations

from srt_runtime.standin.config import StandinConfig
from srt_runtime.standin.metrics import KV_CAPACITY_TOKENS, LiveStats

__all__ = [
    "CONTEXT_LENGTH",
    "VERSION",
    "build_load",
    "build_model_info",
    "build_models",
    "build_server_info",
    "build_tokenized",
    "build_version",
]

#: The context length the stand-in reports (tiny-word's ``max_position_embeddings``).
CONTEXT_LENGTH = 32768
#: The version a stand-in reports; a real engine says its own.
VERSION = "0.0.0+standin"

_OWNER = {
    "sglang": "sglang",
    "vllm": "vllm",
    "trtllm": "tensorrt_llm",
    "atom": "atom",
    "tilert": "vllm",
}


def build_models(config: StandinConfig, created: int) -> dict[str, object]:
    """``/v1/models``: exactly the served name."""
    name = config.served_model_name
    model = {
        "id": name,
        "object": "model",
        "created": created,
        "owned_by": _OWNER[config.engine],
        "root": name,
        "parent": None,
        "max_model_len": CONTEXT_LENGTH,
    }
    return {"object": "list", "data": [model]}


def build_model_info(config: StandinConfig) -> dict[str, object]:
    """SGLang's ``/get_model_info`` (also ``/model_info``)."""
    path = config.model_path or config.served_model_name
    return {
        "model_path": path,
        "tokenizer_path": path,
        "is_generation": True,
        "preferred_sampling_params": None,
        "weight_version": "default",
        "has_image_understanding": False,
        "has_audio_understanding": False,
        "model_type": "llama",
        "architectures": ["LlamaForCausalLM"],
    }


def _mode(config: StandinConfig) -> str:
    return "null" if config.role == "agg" else config.role


def build_server_info(config: StandinConfig, stats: LiveStats) -> dict[str, object]:
    """SGLang's ``/get_server_info`` (also ``/server_info``)."""
    binds = dict(config.binds)
    path = config.model_path or config.served_model_name
    return {
        "model_path": path,
        "tokenizer_path": path,
        "served_model_name": config.served_model_name,
        "host": config.host,
        "port": config.port,
        "tp_size": 1,
        "dp_size": 1,
        "pp_size": 1,
        "ep_size": 1,
        "enable_dp_attention": False,
        "load_balance_method": "round_robin",
        "disaggregation_mode": _mode(config),
        "disaggregation_bootstrap_port": binds.get("bootstrap", 8998),
        "disaggregation_transfer_backend": "mooncake",
        "context_length": CONTEXT_LENGTH,
        "max_total_num_tokens": KV_CAPACITY_TOKENS,
        "max_running_requests": 4096,
        "page_size": 1,
        "skip_tokenizer_init": False,
        "is_embedding": False,
        "enable_metrics": True,
        "dtype": "auto",
        "kv_cache_dtype": "auto",
        "internal_states": [
            {
                "last_gen_throughput": 0.0,
                "load": stats.running,
                "memory_usage": {"weight": 0.0, "kvcache": 0.0, "token_capacity": 0},
            }
        ],
        "version": VERSION,
    }


def build_load(stats: LiveStats) -> list[dict[str, int]]:
    """SGLang's ``/get_load``: one entry per data-parallel rank."""
    return [
        {
            "dp_rank": 0,
            "num_reqs": stats.running,
            "num_waiting_reqs": 0,
            "num_tokens": stats.held_tokens,
        }
    ]


def build_version() -> dict[str, str]:
    return {"version": VERSION}


def build_tokenized(tokens: list[int]) -> dict[str, object]:
    """``/tokenize`` (vLLM's shape, which SGLang shares)."""
    return {
        "count": len(tokens),
        "max_model_len": CONTEXT_LENGTH,
        "tokens": tokens,
        "token_strs": None,
    }
