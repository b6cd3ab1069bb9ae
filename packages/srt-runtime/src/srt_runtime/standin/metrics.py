"""Live request counts and the Prometheus text of ``/metrics`` in the engine's own naming.

``LiveStats`` is the one piece of mutable state a stand-in keeps (the server updates it as
generations start, emit tokens and end); ``render_metrics`` is pure. Running requests are the
generations in flight; nothing ever waits in a queue; the KV-cache usage is the tokens held by
running requests over a notional capacity of ``KV_CAPACITY_TOKENS``.
"""

from __future__ import annotations

from typing import assert_never

from srt_runtime.standin.config import Engine

__all__ = ["KV_CAPACITY_TOKENS", "LiveStats", "render_metrics"]

#: The KV cache a stand-in pretends to have, in tokens (only ``token_usage`` reads it).
KV_CAPACITY_TOKENS = 1_048_576


class LiveStats:
    __slots__ = (
        "completed",
        "generation_tokens",
        "held_tokens",
        "prompt_tokens",
        "requests",
        "running",
    )

    def __init__(self) -> None:
        self.running = 0
        #: Prompt and generated tokens of the running requests.
        self.held_tokens = 0
        self.requests = 0
        self.completed = 0
        self.prompt_tokens = 0
        self.generation_tokens = 0

    def started(self, prompt_tokens: int) -> None:
        self.running += 1
        self.requests += 1
        self.held_tokens += prompt_tokens
        self.prompt_tokens += prompt_tokens

    def emitted(self, tokens: int) -> None:
        self.held_tokens += tokens
        self.generation_tokens += tokens

    def finished(self, held: int, *, completed: bool) -> None:
        """A generation ended (``completed``: all its tokens were sent); it held ``held``."""
        self.running -= 1
        self.held_tokens -= held
        self.completed += completed

    @property
    def kv_usage(self) -> float:
        return min(1.0, self.held_tokens / KV_CAPACITY_TOKENS)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _family(name: str, kind: str, help_text: str, labels: str, value: float) -> str:
    return f"# HELP {name} {help_text}\n# TYPE {name} {kind}\n{name}{{{labels}}} {value!r}\n"


def render_metrics(engine: Engine, model: str, stats: LiveStats) -> str:
    """``/metrics`` of an engine serving ``model`` with ``stats`` as they are now."""
    labels = f'model_name="{_escape(model)}"'
    match engine:
        case "sglang":
            rows = [
                ("sglang:num_running_reqs", "gauge", "running requests", stats.running),
                ("sglang:num_queue_reqs", "gauge", "queued requests", 0),
                ("sglang:token_usage", "gauge", "KV cache usage", stats.kv_usage),
                ("sglang:prompt_tokens_total", "counter", "prompt tokens", stats.prompt_tokens),
                (
                    "sglang:generation_tokens_total",
                    "counter",
                    "generated tokens",
                    stats.generation_tokens,
                ),
                ("sglang:num_requests_total", "counter", "requests", stats.requests),
            ]
        case "vllm" | "atom" | "tilert" | "trtllm":
            # ATOM and TileRT serve vLLM-compatible APIs; TRT-LLM's own names differ by
            # version, so the stand-in uses the vLLM names there too.
            usage = stats.kv_usage
            labels = f'engine="0",{labels}'
            rows = [
                ("vllm:num_requests_running", "gauge", "running requests", stats.running),
                ("vllm:num_requests_waiting", "gauge", "waiting requests", 0),
                ("vllm:gpu_cache_usage_perc", "gauge", "KV cache usage (old name)", usage),
                ("vllm:kv_cache_usage_perc", "gauge", "KV cache usage", usage),
                ("vllm:prompt_tokens_total", "counter", "prompt tokens", stats.prompt_tokens),
                (
                    "vllm:generation_tokens_total",
                    "counter",
                    "generated tokens",
                    stats.generation_tokens,
                ),
                ("vllm:request_success_total", "counter", "finished requests", stats.completed),
            ]
        case _:
            assert_never(engine)
    return "".join(_family(name, kind, text, labels, value) for name, kind, text, value in rows)
